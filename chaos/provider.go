package chaos

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// ProviderName is the Provider field of the errors a Provider injects.
const ProviderName = "chaos"

// DefaultSlowFirstToken is the delay of a slow first token when
// ProviderOptions.SlowFirstToken is zero.
const DefaultSlowFirstToken = time.Second

// ProviderOptions configures a Provider. The zero value injects nothing.
// Each call draws at most one fault: the rates must add up to at most 1.
type ProviderOptions struct {
	// FailRate is the fraction of calls, in [0, 1], that fail before
	// reaching the wrapped provider. Zero injects nothing.
	FailRate float64
	// Kinds are the failures of FailRate, drawn with equal odds. Empty
	// means providers.KindRateLimited (status 429), providers.KindServer
	// (500) and providers.KindTimeout (no response). Only those three
	// kinds are accepted.
	Kinds []providers.Kind
	// MalformedRate is the fraction of calls whose reply carries an
	// undecodable chunk: the stream fails with a providers.KindOther error
	// (not retryable) after the chunks before it, and Chat fails the same
	// way. Zero injects none.
	MalformedRate float64
	// TruncateRate is the fraction of calls whose streamed reply is cut
	// before its end: the stream fails with a providers.KindTimeout error
	// (retryable) after at most two chunks, as a dropped connection does.
	// Zero injects none.
	TruncateRate float64
	// SlowRate is the fraction of calls whose first chunk (or whole
	// reply, for Chat) comes SlowFirstToken late. Zero injects none.
	SlowRate float64
	// SlowFirstToken is the delay of a slow call. Zero means
	// DefaultSlowFirstToken. The delay ends early when the call's
	// context is done.
	SlowFirstToken time.Duration
	// Seed seeds the draws.
	Seed uint64
	// OnFault receives every injected fault. Nil means none is reported
	// (Stats still counts them).
	OnFault Observer
}

// Provider is a providers.Provider that injects the faults of a remote
// model API into a fraction of its calls: failures before the call
// (rate limited, server error, timeout; a *providers.Error wrapping
// ErrInjected), malformed and truncated streams, and slow first tokens.
// The other calls go to the provider it wraps untouched. It is safe for
// concurrent use.
type Provider struct {
	inner providers.Provider
	opts  ProviderOptions
	kinds []providers.Kind
	dice  *dice

	calls                      atomic.Int64
	malformed, truncated, slow atomic.Int64
	mu                         sync.Mutex
	fails                      map[providers.Kind]int64
}

var _ providers.Provider = (*Provider)(nil)

// NewProvider wraps inner. It fails with an error wrapping ErrOptions when
// a rate is not a fraction, the rates add up to more than 1, a delay is
// negative or a kind is not injectable.
func NewProvider(inner providers.Provider, opts ProviderOptions) (*Provider, error) {
	if inner == nil {
		return nil, fmt.Errorf("%w: nil provider", ErrOptions)
	}
	if err := checkRates([]string{"FailRate", "MalformedRate", "TruncateRate", "SlowRate"},
		opts.FailRate, opts.MalformedRate, opts.TruncateRate, opts.SlowRate); err != nil {
		return nil, err
	}
	if err := checkDelay("SlowFirstToken", opts.SlowFirstToken); err != nil {
		return nil, err
	}
	if opts.SlowFirstToken == 0 {
		opts.SlowFirstToken = DefaultSlowFirstToken
	}
	kinds := slices.Clone(opts.Kinds)
	if len(kinds) == 0 {
		kinds = []providers.Kind{providers.KindRateLimited, providers.KindServer, providers.KindTimeout}
	}
	for _, k := range kinds {
		if _, _, ok := injectedStatus(k); !ok {
			return nil, fmt.Errorf("%w: Kinds: %s cannot be injected", ErrOptions, k)
		}
	}
	return &Provider{inner: inner, opts: opts, kinds: kinds, dice: newDice(opts.Seed), fails: map[providers.Kind]int64{}}, nil
}

// injectedStatus returns the HTTP status of an injectable kind (0 when no
// response arrives) and its fault kind.
func injectedStatus(k providers.Kind) (int, FaultKind, bool) {
	switch k {
	case providers.KindRateLimited:
		return http.StatusTooManyRequests, FaultRateLimited, true
	case providers.KindServer:
		return http.StatusInternalServerError, FaultServerError, true
	case providers.KindTimeout:
		return 0, FaultTimeout, true
	}
	return 0, "", false
}

// plan is the fault drawn for one call.
type plan struct {
	fail              error
	malformed, cut    bool
	slow              time.Duration
	cutAfter, badSkip int
}

// draw counts a call and draws its fault.
func (p *Provider) draw() plan {
	p.calls.Add(1)
	o := p.opts
	if o.FailRate+o.MalformedRate+o.TruncateRate+o.SlowRate == 0 {
		return plan{}
	}
	r := p.dice.roll()
	switch {
	case r < o.FailRate:
		kind := p.kinds[p.dice.intN(len(p.kinds))]
		p.mu.Lock()
		p.fails[kind]++
		p.mu.Unlock()
		status, fk, _ := injectedStatus(kind)
		o.OnFault.observe(Fault{Kind: fk})
		return plan{fail: &providers.Error{Kind: kind, Status: status, Provider: ProviderName, Message: "injected " + kind.String(), Err: ErrInjected}}
	case r < o.FailRate+o.MalformedRate:
		p.malformed.Add(1)
		o.OnFault.observe(Fault{Kind: FaultMalformedStream})
		return plan{malformed: true, badSkip: p.dice.intN(3)}
	case r < o.FailRate+o.MalformedRate+o.TruncateRate:
		p.truncated.Add(1)
		o.OnFault.observe(Fault{Kind: FaultTruncatedStream})
		return plan{cut: true, cutAfter: p.dice.intN(3)}
	case r < o.FailRate+o.MalformedRate+o.TruncateRate+o.SlowRate:
		p.slow.Add(1)
		o.OnFault.observe(Fault{Kind: FaultSlowFirstToken})
		return plan{slow: o.SlowFirstToken}
	}
	return plan{}
}

// malformedError is the error of an undecodable chunk.
func malformedError() error {
	return &providers.Error{Kind: providers.KindOther, Provider: ProviderName, Message: "injected malformed chunk: {\"choices\":[{", Err: ErrInjected}
}

// truncatedError is the error of a reply cut before its end.
func truncatedError() error {
	return &providers.Error{Kind: providers.KindTimeout, Provider: ProviderName, Message: "injected stream cut before its end", Err: ErrInjected}
}

// Chat fails, delays, or calls the wrapped provider's Chat.
func (p *Provider) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	pl := p.draw()
	switch {
	case pl.fail != nil:
		return nil, pl.fail
	case pl.malformed:
		return nil, malformedError()
	case pl.cut:
		return nil, truncatedError()
	case pl.slow > 0:
		if err := wait(ctx, pl.slow); err != nil {
			return nil, err
		}
	}
	return p.inner.Chat(ctx, req)
}

// Stream fails, or calls the wrapped provider's Stream and plays the
// drawn fault on its chunks.
func (p *Provider) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	pl := p.draw()
	if pl.fail != nil {
		return nil, pl.fail
	}
	s, err := p.inner.Stream(ctx, req)
	if err != nil || (!pl.malformed && !pl.cut && pl.slow == 0) {
		return s, err
	}
	return &faultyStream{Stream: s, ctx: ctx, plan: pl}, nil
}

// ProviderStats counts the calls of a Provider.
type ProviderStats struct {
	// Calls is the number of Chat and Stream calls.
	Calls int64
	// Failures counts the failures injected before a call, by kind.
	Failures map[providers.Kind]int64
	// Malformed, Truncated and Slow count the replies spoilt in each way.
	Malformed, Truncated, Slow int64
}

// Failed returns the total number of failures injected before a call.
func (s ProviderStats) Failed() int64 {
	var n int64
	for _, c := range s.Failures {
		n += c
	}
	return n
}

// Injected returns the total number of injected faults of every kind.
func (s ProviderStats) Injected() int64 {
	return s.Failed() + s.Malformed + s.Truncated + s.Slow
}

// Stats returns what the provider has injected so far.
func (p *Provider) Stats() ProviderStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	fails := make(map[providers.Kind]int64, len(p.fails))
	for k, v := range p.fails {
		fails[k] = v
	}
	return ProviderStats{Calls: p.calls.Load(), Failures: fails,
		Malformed: p.malformed.Load(), Truncated: p.truncated.Load(), Slow: p.slow.Load()}
}
