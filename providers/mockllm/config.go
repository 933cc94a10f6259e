package mockllm

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/providers"
)

// The defaults a zero Config uses.
const (
	// DefaultModel is the model /v1/models lists when Config.Models is empty.
	DefaultModel = "scripted"
	// DefaultMaxBodyBytes caps a request body when Config.MaxBodyBytes is zero.
	DefaultMaxBodyBytes = 8 << 20
	// DefaultShutdownTimeout bounds the graceful part of Server.Close.
	DefaultShutdownTimeout = 5 * time.Second
)

// Config configures the mock server. Provider is required; every other
// zero value is a safe default.
type Config struct {
	// Provider answers the chat completions, normally a scripted.Provider.
	// Required.
	Provider providers.Provider
	// Models are the models /v1/models lists and requests may name; a
	// request for another model gets a 404 model_not_found. Empty accepts
	// any model and lists DefaultModel.
	Models []string
	// APIKey, when set, must be sent as "Authorization: Bearer <APIKey>";
	// other requests get a 401 invalid_api_key. Empty accepts any request.
	APIKey string
	// Logger receives one debug line per request (never the API key). The
	// zero Logger discards.
	Logger zerolog.Logger
	// MaxBodyBytes caps a request body; a larger one gets a 413. Zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// AllowNonLoopback lets Start listen on addresses other than loopback
	// ones. The default refuses them, since the server has no real
	// authentication.
	AllowNonLoopback bool
	// ShutdownTimeout is how long Server.Close waits for requests in flight
	// before cutting them. Zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Now stamps the "created" field of responses. Nil means time.Now.
	Now func() time.Time
}

// withDefaults returns a copy of c with its zero fields filled in.
func (c Config) withDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
