package harness

import (
	"context"
	"net/http"
)

// Driver runs turns of the workload on one peer. It must be safe for
// concurrent use: Run calls Turn from several goroutines at once.
type Driver interface {
	// Turn runs one complete turn (the user question, the tool call, the
	// answer), as a fresh conversation unless the driver says otherwise,
	// and checks the answer with workload.CheckAnswer. Any error fails the
	// run.
	Turn(ctx context.Context) error
	// Close releases what the driver holds.
	Close() error
}

// Env is what a driver is built from.
type Env struct {
	// BaseURL is the mock's API root, including "/v1".
	BaseURL string
	// HTTPClient is the client to send every request with.
	HTTPClient *http.Client
}

// Peer names a driver and builds it.
type Peer struct {
	// Name identifies the peer in results, such as "bare" or "eino-react".
	Name string
	// New builds the driver.
	New func(ctx context.Context, env Env) (Driver, error)
}
