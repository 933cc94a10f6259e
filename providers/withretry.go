package providers

import (
	"context"
	"errors"
	"io"

	"github.com/agcore/agcore/messages"
)

// Retrier is a Provider that repeats failed calls itself, such as the
// providers WithRetry returns and openai.Provider. SingleAttempt returns the
// same provider without that retry layer: each of its calls is one attempt.
// A caller that retries on its own, such as actors.Runtime, takes the layer
// off (with the SingleAttempt function) so that a call is never retried by
// two layers, one inside the other.
type Retrier interface {
	Provider
	// SingleAttempt returns the provider this one retries, which must have
	// one retry layer fewer.
	SingleAttempt() Provider
}

// SingleAttempt returns p without its retry layers: while p is a Retrier, it
// is replaced by p.SingleAttempt(). A provider that does not retry is
// returned as it is.
func SingleAttempt(p Provider) Provider {
	for {
		r, ok := p.(Retrier)
		if !ok {
			return p
		}
		p = r.SingleAttempt()
	}
}

// WithRetry returns a Provider that repeats p's failed calls according to
// policy. Chat is repeated as a whole. Stream is repeated only until the
// first chunk reaches the caller: a failure to open the stream, or a
// retryable error before any chunk, opens a new stream; once a chunk has
// been delivered, errors are returned as they are, since the caller has
// already seen part of the reply. Opening and reading share the policy's
// attempts. The result is a Retrier whose SingleAttempt is p.
func WithRetry(p Provider, policy RetryPolicy) Provider {
	return &retrying{p: p, policy: policy}
}

type retrying struct {
	p      Provider
	policy RetryPolicy
}

var _ Retrier = (*retrying)(nil)

// SingleAttempt implements Retrier.
func (r *retrying) SingleAttempt() Provider { return r.p }

// Chat implements Provider.
func (r *retrying) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	return Retry(ctx, r.policy, func(ctx context.Context) (*messages.Response, error) {
		return r.p.Chat(ctx, req)
	})
}

// Stream implements Provider.
func (r *retrying) Stream(ctx context.Context, req messages.Request) (Stream, error) {
	s := &retryStream{r: r, ctx: ctx, req: req}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// retryStream re-opens its stream after a retryable failure that happens
// before the first chunk. It keeps the context of the Stream call because a
// stream lives as long as that call's context.
type retryStream struct {
	r         *retrying
	ctx       context.Context
	req       messages.Request
	cur       Stream
	attempts  int // streams opened or tried so far
	delivered bool
}

// open opens a stream, retrying failures to open it.
func (s *retryStream) open() error {
	for {
		s.attempts++
		st, err := s.r.p.Stream(context.WithValue(s.ctx, attemptKey{}, s.attempts), s.req)
		if err == nil {
			s.cur = st
			return nil
		}
		if err := s.r.policy.next(s.ctx, s.attempts, err); err != nil {
			return err
		}
	}
}

// Recv implements Stream.
func (s *retryStream) Recv() (Chunk, error) {
	for {
		c, err := s.cur.Recv()
		if err == nil {
			s.delivered = true
			return c, nil
		}
		if s.delivered || errors.Is(err, io.EOF) {
			return Chunk{}, err
		}
		d, derr := s.r.policy.decide(s.ctx, s.attempts, err)
		if derr != nil {
			return Chunk{}, derr
		}
		_ = s.cur.Close()
		if werr := s.r.policy.wait(s.ctx, s.attempts, err, d); werr != nil {
			return Chunk{}, werr
		}
		if err := s.open(); err != nil {
			return Chunk{}, err
		}
	}
}

// Response implements Stream.
func (s *retryStream) Response() *messages.Response { return s.cur.Response() }

// Close implements Stream.
func (s *retryStream) Close() error { return s.cur.Close() }
