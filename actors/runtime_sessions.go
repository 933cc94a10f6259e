package actors

// This file holds the Runtime's directory of live sessions: the handles
// (sessionRef) through which everything outside a session actor reaches
// it, activation, and the hand-over at passivation.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/memory"
)

// sessionRef is the handle of one live session actor: its id and PID, and
// done, closed once the actor has stopped. It is all the runtime, Session
// handles and other sessions hold of a session; the session's state is the
// actor's alone. err says why the actor stopped for good (nil after a
// passivation): the actor writes it once, before it closes done, and it is
// read only after done is closed.
type sessionRef struct {
	id   string
	pid  *actor.PID
	done chan struct{}
	err  error
	// child marks a sub-agent's session, which stops with its parent.
	child bool
	// posted counts the commands posted to the actor; guarded by the
	// runtime's mu (see Runtime.retire).
	posted uint64
	// activated is set once the actor has loaded the journal and
	// journaled its activation: Open of the session has nothing to ask
	// the actor then.
	activated atomic.Bool
}

func newSessionRef(id string, child bool) *sessionRef {
	return &sessionRef{id: id, child: child, done: make(chan struct{})}
}

// stopped returns why the actor stopped, once it has: its reason, or
// ErrSessionStopped when it gave none.
func (r *sessionRef) stopped() error {
	if r.err != nil {
		return r.err
	}
	return fmt.Errorf("%w: %s", ErrSessionStopped, r.id)
}

// sessionProps returns the props of a session actor that carries c across
// its restarts: its mailbox runs on the runtime's workers (c.disp), and its
// children (sub-agents) are supervised as sessions are.
func (rt *Runtime) sessionProps(c *sessionCarry, opts ...actor.PropsOption) *actor.Props {
	opts = append(opts, actor.WithDispatcher(c.disp), actor.WithSupervisor(rt.sessionStrategy))
	return actor.PropsFromProducer(func() actor.Actor { return newSessionActor(rt, c) }, opts...)
}

// activateLocked returns the handle of session id, spawning its actor when
// none runs, and whether it spawned it. A submission first, when not nil,
// is handed to an actor it spawns as its first command, taken up as the
// actor starts: the session's activation and the turn's message are then
// journaled in one append. rt.mu is held; it is released while an actor of
// the same name that is stopping (a passivation) finishes.
func (rt *Runtime) activateLocked(id string, first *submitCmd) (*sessionRef, bool, error) {
	return rt.activateWithLocked(id, first, nil)
}

// activated reports whether an actor runs session id and has journaled
// its activation, in a runtime that is not shutting down.
func (rt *Runtime) activated(id string) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	ref := rt.live[id]
	return !rt.closed && ref != nil && ref.activated.Load()
}

// activateLoaded activates session id, when no actor runs it, on the
// caller's goroutine: it loads the journal, journals the activation, and
// spawns the actor with the state, and reports whether it did. Loading and
// activating are what can make an activation fail (a damaged journal, a
// fenced or full one); when they succeed here, Open has nothing to wait
// for from the new actor. It does nothing, and reports false, when the
// session is active, when the journal cannot activate with an append
// (it is not a memory.ActivateAppender), or when the load or the
// activation fails: Open then asks the actor, which loads the journal and
// fails as it always does.
//
// Delete waits while the journal is loaded and activated here. An actor of
// the session still stopping discards the activation (the new actor loads
// the journal itself). Another activation of the session meanwhile (a
// submission on another goroutine) journals an activation after this one,
// which fences it off, and its actor is the one Open reaches.
func (rt *Runtime) activateLoaded(ctx context.Context, id string) bool {
	aa, ok := rt.journal.(memory.ActivateAppender)
	if !ok {
		return false
	}
	rt.mu.Lock()
	_, deleting := rt.deleting[id]
	if rt.closed || deleting || rt.live[id] != nil {
		rt.mu.Unlock()
		return false
	}
	if rt.opening == nil {
		rt.opening = make(map[string]int)
	}
	rt.opening[id]++
	rt.mu.Unlock()

	opened, err := rt.loadAndActivate(ctx, aa, id)

	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.opening[id]--; rt.opening[id] == 0 {
		delete(rt.opening, id)
	}
	rt.openDone.Broadcast()
	if err != nil {
		return false
	}
	_, spawned, err := rt.activateWithLocked(id, nil, opened)
	return err == nil && spawned
}

// loadAndActivate loads session id from the journal and journals its
// activation.
func (rt *Runtime) loadAndActivate(ctx context.Context, aa memory.ActivateAppender, id string) (*openedSession, error) {
	st, err := rt.loadState(ctx, id)
	if err != nil {
		return nil, err
	}
	activation, tail, err := aa.ActivateAppend(ctx, id, rt.cfg.Node, st.Seq)
	if err != nil {
		return nil, err
	}
	return &openedSession{st: st, activation: activation, tail: tail}, nil
}

// loadState returns the state of session id from its journal; a session
// with no journal has an empty one.
func (rt *Runtime) loadState(ctx context.Context, id string) (*memory.State, error) {
	st, err := rt.journal.Load(ctx, id)
	if errors.Is(err, memory.ErrNotFound) {
		return &memory.State{}, nil
	}
	return st, err
}

// activateWithLocked is activateLocked with the session loaded and
// activated already (opened, or nil: the actor loads and activates it).
func (rt *Runtime) activateWithLocked(id string, first *submitCmd, opened *openedSession) (*sessionRef, bool, error) {
	for {
		if rt.closed {
			return nil, false, ErrClosed
		}
		if ref := rt.live[id]; ref != nil {
			return ref, false, nil
		}
		if _, ok := rt.deleting[id]; ok {
			return nil, false, fmt.Errorf("%w: %s", ErrSessionDeleted, id)
		}
		ref := newSessionRef(id, false)
		c := newCarry(rt, ref, nil)
		if first != nil {
			c.pending, c.received = []*submitCmd{first}, 1
		}
		c.opened = opened
		pid, err := rt.system.Root.SpawnNamed(rt.sessionProps(c, actor.WithGuardian(rt.sessionStrategy)), "sessions/"+id)
		if errors.Is(err, actor.ErrNameExists) {
			// The actor stopping may have written since the load.
			opened = nil
			rt.mu.Unlock()
			_ = rt.system.Root.StopFuture(pid).Wait()
			rt.mu.Lock()
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("actors: spawn session %s: %w", id, err)
		}
		ref.pid = pid
		rt.live[id] = ref
		return ref, true, nil
	}
}

// post delivers cmd to session id, activating it. A submission that
// activates the session is handed to the new actor with its props rather
// than through its mailbox (see activateLocked).
func (rt *Runtime) post(id string, cmd command) (*sessionRef, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	first, _ := cmd.(*submitCmd)
	ref, spawned, err := rt.activateLocked(id, first)
	if err != nil {
		return nil, err
	}
	ref.posted++
	if !spawned || first == nil {
		rt.system.Root.Send(ref.pid, cmd)
	}
	return ref, nil
}

// postLive delivers cmd to session id if its actor runs, and returns its
// handle; nil when the session is not active.
func (rt *Runtime) postLive(id string, cmd command) *sessionRef {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	ref := rt.live[id]
	if ref != nil && !rt.closed {
		ref.posted++
		rt.system.Root.Send(ref.pid, cmd)
	}
	return ref
}

// postRef delivers cmd to the actor of ref, whether or not it is still in
// the directory.
func (rt *Runtime) postRef(ref *sessionRef, cmd command) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	ref.posted++
	rt.system.Root.Send(ref.pid, cmd)
}

// retire takes ref out of the directory for a passivation, if the actor
// has received every command posted to it (received). From then on, the
// next command activates a new actor; none can reach this one.
func (rt *Runtime) retire(ref *sessionRef, received uint64) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.live[ref.id] != ref || ref.posted != received {
		return false
	}
	delete(rt.live, ref.id)
	return true
}

// register enters the handle of a sub-agent session, whose actor spawn
// starts (as a child of its parent's actor), in the directory. It fails
// when a session of that id is active already (it was opened on its own)
// or the runtime is closed; spawn is not called then.
func (rt *Runtime) register(ref *sessionRef, spawn func() *actor.PID) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	switch {
	case rt.closed:
		return ErrClosed
	case rt.live[ref.id] != nil:
		return fmt.Errorf("actors: session %s is active already", ref.id)
	}
	ref.pid = spawn()
	rt.live[ref.id] = ref
	return nil
}

// forget takes ref out of the directory once its actor has stopped.
func (rt *Runtime) forget(ref *sessionRef) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.live[ref.id] == ref {
		delete(rt.live, ref.id)
	}
}

// live returns the handle of session id if its actor runs, without
// activating it.
func (rt *Runtime) liveRef(id string) *sessionRef {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.live[id]
}

// liveRefs returns the handles of every active session.
func (rt *Runtime) liveRefs() []*sessionRef {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make([]*sessionRef, 0, len(rt.live))
	for _, ref := range rt.live {
		out = append(out, ref)
	}
	return out
}

// onSessionStop runs on the supervisor when it stops a session for good:
// the session leaves the directory at once, and its actor, as it stops,
// tells its callers why (takeStopReason).
func (rt *Runtime) onSessionStop(child *actor.PID, reason error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for id, ref := range rt.live {
		if ref.pid != nil && ref.pid.Equal(child) {
			delete(rt.live, id)
			if rt.stopReasons == nil {
				rt.stopReasons = make(map[*sessionRef]error)
			}
			rt.stopReasons[ref] = &SessionStoppedError{Session: id, Reason: reason}
			return
		}
	}
}

// takeStopReason returns (and forgets) the reason the supervisor gave for
// stopping ref's actor, nil when it did not stop it.
func (rt *Runtime) takeStopReason(ref *sessionRef) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	err := rt.stopReasons[ref]
	delete(rt.stopReasons, ref)
	return err
}
