package chaos

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// ProviderName is the Provider field of the errors a Provider injects.
const ProviderName = "chaos"

// ProviderOptions configures a Provider. The zero value injects nothing.
type ProviderOptions struct {
	// FailRate is the fraction of calls, in [0, 1], that fail before
	// reaching the wrapped provider. Zero injects nothing.
	FailRate float64
	// Kinds are the failures, drawn with equal odds. Empty means
	// providers.KindRateLimited (status 429), providers.KindServer (500)
	// and providers.KindTimeout (no response). Only those three kinds are
	// accepted.
	Kinds []providers.Kind
	// Seed seeds the draws.
	Seed uint64
}

// Provider is a providers.Provider that fails a fraction of its calls with
// a *providers.Error (wrapping ErrInjected) and passes the others to the
// provider it wraps. It is safe for concurrent use.
type Provider struct {
	inner providers.Provider
	rate  float64
	kinds []providers.Kind
	dice  *dice

	calls atomic.Int64
	mu    sync.Mutex
	fails map[providers.Kind]int64
}

var _ providers.Provider = (*Provider)(nil)

// NewProvider wraps inner. It fails with an error wrapping ErrOptions when
// FailRate is not a fraction or a kind is not injectable.
func NewProvider(inner providers.Provider, opts ProviderOptions) (*Provider, error) {
	if inner == nil {
		return nil, fmt.Errorf("%w: nil provider", ErrOptions)
	}
	if err := checkRate("FailRate", opts.FailRate); err != nil {
		return nil, err
	}
	kinds := slices.Clone(opts.Kinds)
	if len(kinds) == 0 {
		kinds = []providers.Kind{providers.KindRateLimited, providers.KindServer, providers.KindTimeout}
	}
	for _, k := range kinds {
		if _, ok := injectedStatus(k); !ok {
			return nil, fmt.Errorf("%w: Kinds: %s cannot be injected", ErrOptions, k)
		}
	}
	return &Provider{inner: inner, rate: opts.FailRate, kinds: kinds, dice: newDice(opts.Seed), fails: map[providers.Kind]int64{}}, nil
}

// injectedStatus returns the HTTP status of an injectable kind (0 when no
// response arrives).
func injectedStatus(k providers.Kind) (int, bool) {
	switch k {
	case providers.KindRateLimited:
		return http.StatusTooManyRequests, true
	case providers.KindServer:
		return http.StatusInternalServerError, true
	case providers.KindTimeout:
		return 0, true
	}
	return 0, false
}

// fault draws whether this call fails, and returns its error if so.
func (p *Provider) fault() error {
	p.calls.Add(1)
	if p.rate == 0 || p.dice.roll() >= p.rate {
		return nil
	}
	kind := p.kinds[p.dice.intN(len(p.kinds))]
	p.mu.Lock()
	p.fails[kind]++
	p.mu.Unlock()
	status, _ := injectedStatus(kind)
	return &providers.Error{Kind: kind, Status: status, Provider: ProviderName, Message: "injected " + kind.String(), Err: ErrInjected}
}

// Chat fails or calls the wrapped provider's Chat.
func (p *Provider) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	if err := p.fault(); err != nil {
		return nil, err
	}
	return p.inner.Chat(ctx, req)
}

// Stream fails or calls the wrapped provider's Stream.
func (p *Provider) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	if err := p.fault(); err != nil {
		return nil, err
	}
	return p.inner.Stream(ctx, req)
}

// ProviderStats counts the calls of a Provider.
type ProviderStats struct {
	// Calls is the number of Chat and Stream calls.
	Calls int64
	// Failures counts the injected failures by kind.
	Failures map[providers.Kind]int64
}

// Failed returns the total number of injected failures.
func (s ProviderStats) Failed() int64 {
	var n int64
	for _, c := range s.Failures {
		n += c
	}
	return n
}

// Stats returns what the provider has injected so far.
func (p *Provider) Stats() ProviderStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	fails := make(map[providers.Kind]int64, len(p.fails))
	for k, v := range p.fails {
		fails[k] = v
	}
	return ProviderStats{Calls: p.calls.Load(), Failures: fails}
}
