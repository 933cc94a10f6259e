// Package openai is a providers.Provider for any endpoint that speaks the
// OpenAI chat completions API: OpenAI itself, Azure-style proxies, Ollama,
// vLLM, llama.cpp, DeepSeek, and agcore's own mockllm.
//
//	p, err := openai.New(openai.Options{
//		BaseURL: "http://127.0.0.1:8080/v1",
//		APIKey:  os.Getenv("OPENAI_API_KEY"),
//		Model:   "gpt-4o-mini",
//	})
//	if err != nil {
//		return err
//	}
//	resp, err := p.Chat(ctx, messages.Request{Messages: []messages.Message{messages.UserText("hi")}})
//
// # Requests
//
// The request body is written by this package, without reflection, into a
// buffer reused from one request to the next, and sent with the provider's own
// http.Client (Options.HTTPClient). It is byte for byte what
// github.com/sashabaranov/go-openai's client sends for the same request: the
// same members in the same order and the same headers (the API key as
// "Authorization: Bearer", Options.Organization as OpenAI-Organization, and for
// a stream "Accept: text/event-stream"). go-openai still provides the types of
// the replies and of their errors (*openai.APIError for an OpenAI error object,
// *openai.RequestError for any other error body, both wrapped in the
// *providers.Error the provider returns), its checks of reasoning models
// (max_tokens sent as max_completion_tokens, sampling parameters they refuse)
// and its list of models the chat completions API does not serve.
//
// # Streaming
//
// Stream asks for stream_options.include_usage, so the last chunk carries the
// token usage, and assembles tool calls from their fragments: several
// parallel calls whose arguments arrive across many chunks come out of
// Stream.Response as complete calls, in index order. The server-sent events
// are decoded by this package rather than by go-openai, because go-openai's
// reader cannot tell a stream that ended with "data: [DONE]" from a
// connection cut in the middle; here a stream that stops in the middle of a
// line, or before both [DONE] and a finish reason, fails with
// providers.KindTimeout, wrapping ErrStreamCut and io.ErrUnexpectedEOF. Comment lines, event/id/retry fields and "data:" with
// or without a space are accepted; a data line that is not valid JSON is
// reported as an error wrapping ErrMalformedChunk and skipped, so Recv may be
// called again to continue with the next line.
//
// # Errors and retries
//
// Every failure is a *providers.Error whose Kind follows the HTTP status and
// the error code (401/403 authentication, 404 or model_not_found not found,
// context_length_exceeded, 429 rate limited with its Retry-After, 5xx
// server), or, without a response, the transport failure: no connection
// (refused, unknown host, failed DNS lookup, no route, dial timeout) is
// unavailable, with a message that names the endpoint ("connection refused:
// nothing is listening at http://127.0.0.1:1/v1"); a deadline, an idle
// stream, a read timeout or a reset connection is timeout; the caller's
// cancellation is canceled.
//
// Called directly, the provider repeats retryable failures itself according
// to Options.Retry (3 attempts in all by default, Retry-After capped at
// 30 s); see providers.RetryPolicy. Under actors.Runtime it does not: the
// runtime takes that layer off (Provider.SingleAttempt) and retries model
// calls with its own Config.Retry, so that every call is retried by exactly
// one layer.
//
// The API key is sent in the Authorization header and never logged.
package openai
