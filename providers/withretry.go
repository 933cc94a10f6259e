package providers

import (
	"context"
	"errors"
	"io"

	"github.com/agcore/agcore/messages"
)

// WithRetry returns a Provider that repeats p's failed calls according to
// policy. Chat is repeated as a whole. Stream is repeated only until the
// first chunk reaches the caller: a failure to open the stream, or a
// retryable error before any chunk, opens a new stream; once a chunk has
// been delivered, errors are returned as they are, since the caller has
// already seen part of the reply.
func WithRetry(p Provider, policy RetryPolicy) Provider {
	return &retrying{p: p, policy: policy}
}

type retrying struct {
	p      Provider
	policy RetryPolicy
}

var _ Provider = (*retrying)(nil)

// Chat implements Provider.
func (r *retrying) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	return Retry(ctx, r.policy, func(ctx context.Context) (*messages.Response, error) {
		return r.p.Chat(ctx, req)
	})
}

// Stream implements Provider.
func (r *retrying) Stream(ctx context.Context, req messages.Request) (Stream, error) {
	s := &retryStream{r: r, ctx: ctx, req: req}
	if err := s.open(0); err != nil {
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
	retries   int // retries made so far
	delivered bool
}

// open opens a stream, retrying failures, after retries retries were
// already made.
func (s *retryStream) open(retries int) error {
	limit := s.r.policy.maxRetries()
	for {
		attempt := retries + 1
		st, err := s.r.p.Stream(context.WithValue(s.ctx, attemptKey{}, attempt), s.req)
		if err == nil {
			s.cur, s.retries = st, retries
			return nil
		}
		if retries >= limit || !IsRetryable(err) || s.ctx.Err() != nil {
			return err
		}
		retries++
		if werr := s.r.policy.wait(s.ctx, retries, err); werr != nil {
			return werr
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
		if s.delivered || errors.Is(err, io.EOF) || !IsRetryable(err) ||
			s.retries >= s.r.policy.maxRetries() || s.ctx.Err() != nil {
			return Chunk{}, err
		}
		_ = s.cur.Close()
		retries := s.retries + 1
		if werr := s.r.policy.wait(s.ctx, retries, err); werr != nil {
			return Chunk{}, werr
		}
		if oerr := s.open(retries); oerr != nil {
			return Chunk{}, oerr
		}
	}
}

// Response implements Stream.
func (s *retryStream) Response() *messages.Response { return s.cur.Response() }

// Close implements Stream.
func (s *retryStream) Close() error { return s.cur.Close() }
