package cluster

// This file holds the request loop around protoactor's cluster.Request:
// each attempt has its own deadline, well under protoactor's fixed 5 s
// wait on a grain's activation, and only idempotent requests are retried.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/cluster"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/agcore/agcore/memory"
)

var (
	// ErrOutcomeUnknown is returned for a request that is not retried
	// (CancelTurn) when its attempt got no answer: it may or may not have
	// reached the grain.
	ErrOutcomeUnknown = errors.New("cluster: no answer; the request may or may not have been handled")
	// ErrUnknownType is returned when the grain's member does not know the
	// request's type (an older version).
	ErrUnknownType = errors.New("cluster: the member does not know the message type")
)

// Backoff between attempts that got no answer: it starts at backoffMin
// and doubles up to backoffMax. A Pending answer is followed at once.
const (
	backoffMin = 25 * time.Millisecond
	backoffMax = 400 * time.Millisecond
)

// Submit runs text as the turn turnID of session, on whichever member owns
// the session, and returns how it ended. The turn id makes the request
// idempotent, so it is sent again, with the same id, after an attempt
// without an answer (the owner died or is unreachable, and the session
// moves to another member), after an answer that the turn is still
// running, and after an answer that the member's copy of the session was
// fenced; it ends when the turn does or ctx ends. turnID is required.
// A turn that failed or was cancelled returns its result with an error.
func (m *Member) Submit(ctx context.Context, session, turnID, text string) (*TurnReply, error) {
	if err := memory.ValidateSession(session); err != nil {
		return nil, fmt.Errorf("cluster: submit: %w", err)
	}
	if turnID == "" {
		return nil, fmt.Errorf("cluster: submit to %s: empty turn id (it makes the submission safe to resend)", session)
	}
	msg := &SubmitTurn{TurnID: turnID, Text: text, Wait: m.cfg.Attempt / 2}
	for {
		v, err := m.request(ctx, session, msg, true)
		if err != nil {
			return nil, err
		}
		reply, ok := v.(*TurnReply)
		if !ok {
			return nil, fmt.Errorf("cluster: submit to %s: answer %T, want *TurnReply", session, v)
		}
		switch {
		case reply.Pending:
			continue
		case reply.Fenced:
			// The member's copy was superseded before it journaled the
			// submission; the next attempt reaches the current one.
			if err := m.pause(ctx, backoffMin); err != nil {
				return nil, fmt.Errorf("cluster: submit to %s: %w", session, err)
			}
			continue
		case reply.Error != "":
			return reply, &TurnFailedError{Session: session, TurnID: turnID, Member: reply.Member, Reason: reply.Error}
		}
		return reply, nil
	}
}

// Status returns the status of session from the member that owns it,
// activating it there. It only reads, so it is retried like Submit.
func (m *Member) Status(ctx context.Context, session string) (*StatusReply, error) {
	if err := memory.ValidateSession(session); err != nil {
		return nil, fmt.Errorf("cluster: status: %w", err)
	}
	v, err := m.request(ctx, session, &StatusRequest{}, true)
	if err != nil {
		return nil, err
	}
	reply, ok := v.(*StatusReply)
	if !ok {
		return nil, fmt.Errorf("cluster: status of %s: answer %T, want *StatusReply", session, v)
	}
	if reply.Error != "" {
		return reply, fmt.Errorf("cluster: status of %s on %s: %s", session, reply.Member, reply.Error)
	}
	return reply, nil
}

// Cancel cancels the running turn of session. It is sent once: a second
// copy could cancel a later turn. An attempt without an answer returns
// ErrOutcomeUnknown.
func (m *Member) Cancel(ctx context.Context, session string) (*CancelReply, error) {
	if err := memory.ValidateSession(session); err != nil {
		return nil, fmt.Errorf("cluster: cancel: %w", err)
	}
	v, err := m.request(ctx, session, &CancelTurn{}, false)
	if err != nil {
		return nil, err
	}
	reply, ok := v.(*CancelReply)
	if !ok {
		return nil, fmt.Errorf("cluster: cancel in %s: answer %T, want *CancelReply", session, v)
	}
	if reply.Error != "" {
		return reply, fmt.Errorf("cluster: cancel in %s on %s: %s", session, reply.Member, reply.Error)
	}
	return reply, nil
}

// TurnFailedError is a turn that ran and failed or was cancelled, or that
// its member could not run; Reason says why.
type TurnFailedError struct {
	Session, TurnID, Member, Reason string
}

func (e *TurnFailedError) Error() string {
	return fmt.Sprintf("cluster: turn %s of %s on %s: %s", e.TurnID, e.Session, e.Member, e.Reason)
}

// request sends msg to session's grain and returns its decoded answer.
// Attempts without an answer are retried with a growing pause while ctx
// lasts when idempotent; otherwise the first one returns
// ErrOutcomeUnknown.
func (m *Member) request(ctx context.Context, session string, msg any, idempotent bool) (any, error) {
	env, err := m.wire.Encode(msg)
	if err != nil {
		return nil, err
	}
	return m.send(ctx, session, env, idempotent)
}

// send is request for an encoded message.
func (m *Member) send(ctx context.Context, session string, env *anypb.Any, idempotent bool) (any, error) {
	pause := backoffMin
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("cluster: %s to %s after %d attempts: %w", env.TypeUrl, session, attempt-1, err)
		}
		resp, err := m.attempt(ctx, session, env)
		if err == nil {
			v, err := m.decodeAnswer(resp)
			if err != nil {
				return nil, fmt.Errorf("cluster: %s to %s: %w", env.TypeUrl, session, err)
			}
			return v, nil
		}
		m.logger.Debug().Err(err).Str("session", session).Int("attempt", attempt).Msg("cluster: attempt without answer")
		if !idempotent {
			return nil, fmt.Errorf("%w: %s to %s: %w", ErrOutcomeUnknown, env.TypeUrl, session, err)
		}
		if err := m.pause(ctx, pause); err != nil {
			return nil, fmt.Errorf("cluster: %s to %s after %d attempts: %w", env.TypeUrl, session, attempt, err)
		}
		pause = min(2*pause, backoffMax)
	}
}

// attempt is one cluster.Request bounded by Config.Attempt. protoactor
// waits up to 5 s for a grain's activation on a member that died; that
// wait goes on in the background after the attempt has given up on it,
// and its answer, if any, is dropped.
func (m *Member) attempt(ctx context.Context, session string, env *anypb.Any) (any, error) {
	type result struct {
		v   any
		err error
	}
	out := make(chan result, 1)
	go func() {
		v, err := m.cl.Request(session, Kind, env, cluster.WithTimeout(m.cfg.Attempt), cluster.WithRetryCount(1))
		out <- result{v, err}
	}()
	timer := time.NewTimer(m.cfg.Attempt)
	defer timer.Stop()
	select {
	case r := <-out:
		if r.err == nil && r.v == nil {
			r.err = errors.New("no answer")
		}
		return r.v, r.err
	case <-timer.C:
		return nil, fmt.Errorf("no answer within %v", m.cfg.Attempt)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// decodeAnswer unwraps a grain's answer.
func (m *Member) decodeAnswer(resp any) (any, error) {
	env, ok := resp.(*anypb.Any)
	if !ok {
		return nil, fmt.Errorf("%w: answer %T is not an envelope", ErrWire, resp)
	}
	v, err := m.wire.Decode(env)
	if err != nil {
		return nil, err
	}
	switch a := v.(type) {
	case *UnknownReply:
		return nil, fmt.Errorf("%w: %s does not know %s", ErrUnknownType, a.Member, a.Type)
	case *Unknown:
		return nil, fmt.Errorf("%w: answer of unknown type %q", ErrWire, a.Type)
	}
	return v, nil
}

// pause waits d or until ctx ends.
func (m *Member) pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
