// Package providers gives agcore access to chat models.
//
// A Provider has two methods: Chat, which waits for a complete reply, and
// Stream, which returns the reply chunk by chunk and ends with the assembled
// response and its usage. Implementations live in sub-packages: openai (any
// OpenAI-compatible endpoint), scripted (a deterministic model for tests and
// offline demos) and mockllm (an OpenAI-compatible HTTP server over scripted).
//
// This package also holds what every provider shares: the classified *Error
// (errors.As it to read the Kind and whether it is retryable), the retry
// policy (at most MaxAttempts calls, exponential backoff with jitter, a
// server's Retry-After honoured up to MaxRetryAfter, short waits for an
// unreachable endpoint, no wait past the context's deadline, an injectable
// sleep), usage and cost tracking with a per-model price table, and the
// Registry that resolves "provider/model" strings.
//
// # Where retries happen
//
// A call is retried by exactly one layer. Called directly, a provider that
// retries (WithRetry, openai.Provider) is that layer. Under actors.Runtime
// the runtime is: it takes the providers' retry layers off with
// SingleAttempt and retries model calls with its Config.Retry, running its
// hooks around each attempt.
package providers
