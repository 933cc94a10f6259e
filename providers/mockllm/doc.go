// Package mockllm is an OpenAI-compatible HTTP server over any
// providers.Provider, normally a scripted one. It lets the real openai
// provider, go-openai or any other OpenAI client talk to a deterministic
// model over real HTTP, with no network and no API key: it is what
// `agcore demo` and the provider tests run against.
//
//	srv, err := mockllm.Start(ctx, "127.0.0.1:0", mockllm.Config{
//		Provider: scripted.MustNew(scripted.Demo(), scripted.Options{}),
//	})
//	if err != nil {
//		return err
//	}
//	defer srv.Close()
//	// point any OpenAI client at srv.URL(), e.g. http://127.0.0.1:41234/v1
//
// # Endpoints
//
// POST /v1/chat/completions answers with a chat.completion object, or, when
// the request says "stream": true, with server-sent events: one
// chat.completion.chunk per chunk of the provider's stream (the first with
// the assistant role; tool calls as fragments with index, id, type, name
// and arguments, as OpenAI sends them; the finish reason), a last chunk
// with no choices and the usage when stream_options.include_usage is set,
// and "data: [DONE]". GET /v1/models lists Config.Models.
//
// # Errors
//
// Errors are OpenAI error objects, {"error": {"message", "type", "param",
// "code"}}. A *providers.Error from the provider keeps its kind across the
// wire: authentication is a 401 invalid_api_key, not found a 404
// model_not_found, context length a 400 context_length_exceeded, rate
// limited a 429 with Retry-After (whole seconds, rounded up), server a
// 500, timeout a 408, bad request a 400 (a Status the error carries
// overrides these codes). An error in the middle of a stream is sent as a
// "data: {"error": ...}" event that ends the stream. Malformed bodies get
// a 400 that says what is wrong, bodies over Config.MaxBodyBytes a 413,
// and unknown models a 404.
//
// # Safety
//
// Start listens on loopback addresses only unless Config.AllowNonLoopback
// is set; Config.APIKey adds a bearer-token check.
package mockllm
