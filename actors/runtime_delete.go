package actors

// This file holds Runtime.Delete.

import (
	"context"
	"fmt"
	"strings"

	"github.com/agcore/agcore/memory"
)

// sessionClearer is implemented by session memories that can forget a
// session (*memory.SessionMemory does).
type sessionClearer interface {
	Clear(ctx context.Context, session string) error
}

// Delete removes session id: it stops the session's actor, cancelling a
// running turn first (the cancellation is journaled and the turn's streams
// end with OutcomeCancelled; pending approvals are denied), ends the
// session's other streams with ErrSessionDeleted, then deletes its journal,
// the journals of its sub-agents and its session memory (when
// Config.SessionMemory can clear a session). While Delete runs, the session
// cannot be activated; afterwards its id starts an empty session.
//
// It fails with ErrSessionNotFound for a session that has neither an actor
// nor a journal, with ErrClosed after Shutdown, and with ctx's error if the
// actor does not stop in time (a tool that ignores its context); the
// journal is then left in place.
func (rt *Runtime) Delete(ctx context.Context, id string) error {
	if err := memory.ValidateSession(id); err != nil {
		return fmt.Errorf("actors: delete: %w", err)
	}
	rt.mu.Lock()
	// An Open loading the journal on its own goroutine writes to it.
	for rt.opening[id] > 0 {
		rt.openDone.Wait()
	}
	if rt.closed {
		rt.mu.Unlock()
		return ErrClosed
	}
	if _, ok := rt.deleting[id]; ok {
		rt.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrSessionDeleted, id)
	}
	ref := rt.live[id]
	delete(rt.live, id)
	if rt.deleting == nil {
		rt.deleting = make(map[string]struct{})
	}
	rt.deleting[id] = struct{}{}
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		delete(rt.deleting, id)
		rt.mu.Unlock()
	}()

	if ref != nil {
		rt.postRef(ref, &stopCmd{cancelReason: "session deleted", err: fmt.Errorf("%w: %s", ErrSessionDeleted, id)})
		select {
		case <-ref.done:
		case <-ctx.Done():
			return fmt.Errorf("actors: delete %s: stopping the session: %w", id, ctx.Err())
		}
	} else {
		tail, err := rt.journal.Tail(ctx, id)
		if err != nil {
			return fmt.Errorf("actors: delete %s: %w", id, err)
		}
		if tail == 0 {
			return fmt.Errorf("%w: %s", ErrSessionNotFound, id)
		}
	}
	subs, err := rt.subSessions(ctx, id)
	if err != nil {
		return fmt.Errorf("actors: delete %s: %w", id, err)
	}
	for _, sid := range append(subs, id) {
		if err := rt.journal.Delete(ctx, sid); err != nil {
			return fmt.Errorf("actors: delete %s: %w", sid, err)
		}
		if c, ok := rt.sessionMemory.(sessionClearer); ok {
			if err := c.Clear(ctx, sid); err != nil {
				return fmt.Errorf("actors: delete %s: %w", sid, err)
			}
		}
	}
	rt.logger.Info().Str("session", id).Int("sub_agents", len(subs)).Msg("session deleted")
	return nil
}

// subSessions returns the ids of the journaled sub-agent sessions of id
// (and of theirs), whose ids extend id's.
func (rt *Runtime) subSessions(ctx context.Context, id string) ([]string, error) {
	prefix := id + ":sub:"
	var out []string
	for sid, err := range rt.journal.Sessions(ctx) {
		if err != nil {
			return nil, err
		}
		switch {
		case strings.HasPrefix(sid, prefix):
			out = append(out, sid)
		case sid > prefix:
			return out, nil // sessions come in byte order
		}
	}
	return out, nil
}
