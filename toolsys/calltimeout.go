package toolsys

// This file holds WithCallTimeout, a call's deadline that starts once the
// permission pipeline has let the call through.

import (
	"context"
	"time"
)

// callTimeoutKey is the context key of WithCallTimeout.
type callTimeoutKey struct{}

// WithCallTimeout returns a copy of ctx that makes Registry.Call run the
// tool under a deadline of d that starts once the permission pipeline has
// let the call through: the wait for an approval (bounded by the
// pipeline's ApprovalTimeout) does not count against it. d <= 0 leaves ctx
// unchanged.
func WithCallTimeout(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, callTimeoutKey{}, d)
}

// callTimeout returns the timeout WithCallTimeout put in ctx, or 0.
func callTimeout(ctx context.Context) time.Duration {
	d, _ := ctx.Value(callTimeoutKey{}).(time.Duration)
	return d
}
