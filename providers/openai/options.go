package openai

import (
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/redact"
)

// Defaults applied by New to zero Options fields.
const (
	// DefaultBaseURL is OpenAI's own endpoint.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultTimeout bounds a call; see Options.Timeout.
	DefaultTimeout = 120 * time.Second
	// DefaultName is the provider's name in errors and logs.
	DefaultName = "openai"
	// DefaultDialTimeout bounds connecting to the endpoint; see
	// Options.DialTimeout.
	DefaultDialTimeout = 5 * time.Second
)

// Options configures a Provider. The zero value talks to OpenAI without an
// API key, which only a local server accepts; New never modifies Options.
type Options struct {
	// BaseURL is the API root, such as "http://127.0.0.1:11434/v1"; requests
	// go to BaseURL + "/chat/completions". Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" when not empty. It is
	// never logged.
	APIKey string
	// Organization is sent as the OpenAI-Organization header when not empty.
	Organization string
	// Model is used when a Request does not name one. A request without a
	// model fails with providers.KindBadRequest when Model is empty too.
	Model string
	// HTTPClient sends the requests. Nil means a client of its own whose
	// transport keeps up to 64 idle connections per host and connects
	// within DialTimeout. Its Timeout, if set, also bounds streams as a
	// whole; leave it zero and use Timeout.
	HTTPClient *http.Client
	// DialTimeout bounds connecting to the endpoint, name resolution
	// included, when HTTPClient is nil (a client passed in keeps its own
	// dialer). A connection that cannot be made fails with
	// providers.KindUnavailable. Zero means DefaultDialTimeout (5 s);
	// negative means no bound beyond the context's and Timeout.
	DialTimeout time.Duration
	// Timeout bounds each attempt. For Chat it is a bound on the whole call.
	// For Stream it bounds the wait for the response headers and then every
	// wait for more of the body (an idle bound), not the stream as a whole,
	// so that a long answer that keeps flowing is never cut; a stream that
	// goes quiet for Timeout fails with providers.KindTimeout. Zero means
	// DefaultTimeout (120 s); negative means no bound beyond the context's.
	Timeout time.Duration
	// Retry says how failed calls are repeated when the Provider is called
	// directly: Chat as a whole, Stream until its first chunk (see
	// providers.WithRetry). Nil means the default policy (3 attempts in
	// all, 1 s doubling to 30 s, 25 % jitter, Retry-After honoured up to
	// 30 s, 250 ms after an unreachable endpoint);
	// &providers.RetryPolicy{MaxAttempts: 1} disables retrying.
	//
	// It does not apply under actors.Runtime: the runtime takes this layer
	// off (Provider.SingleAttempt) and retries model calls itself with its
	// Config.Retry, so that a call is retried by one layer only.
	Retry *providers.RetryPolicy
	// Logger receives a debug event per attempt (name, base URL, model,
	// attempt, status, duration) and per retry. The zero Logger discards.
	Logger zerolog.Logger
	// Redactor masks credentials in the messages of the errors the
	// provider returns, which quote the endpoint's answers (a server may
	// echo the key it was sent). APIKey is added to it. Nil means a new
	// Redactor that knows APIKey only; pass the process's so that the
	// other credentials it knows are masked too.
	Redactor *redact.Redactor
	// Name is the provider's name in errors and logs. Empty means "openai".
	Name string
	// Now is the clock used to turn a Retry-After date into a wait. Nil
	// means time.Now.
	Now func() time.Time
}
