package cluster

// This file holds the session grain: the actor protoactor's cluster
// activates, on the member that owns a session id, to reach that session
// on the member's runtime.

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// Kind is the cluster kind of session grains.
const Kind = "session"

// maxWait bounds SubmitTurn.Wait, so that a grain always answers well
// within the caller's attempt.
const maxWait = 4 * time.Second

// grain is one session's grain. Its turns run on the member's runtime;
// the goroutines that wait for them answer the callers, so the grain's
// mailbox never waits on a turn.
type grain struct {
	m  *Member
	id string
	// ctx ends when the grain stops: the waits for turns end with it (the
	// turns do not: they belong to the runtime's session).
	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	turns map[string]*turnRun // by turn id, while the turn runs
}

// turnRun is a submission the grain runs: done is closed once reply is set.
type turnRun struct {
	done  chan struct{}
	reply TurnReply
}

func (m *Member) newGrain() actor.Actor {
	ctx, cancel := context.WithCancel(m.ctx)
	return &grain{m: m, ctx: ctx, cancel: cancel, turns: make(map[string]*turnRun)}
}

// Receive handles the grain's messages.
func (g *grain) Receive(c actor.Context) {
	switch msg := c.Message().(type) {
	case *cluster.ClusterInit:
		g.id = msg.Identity.Identity
		c.SetReceiveTimeout(g.m.cfg.IdleTimeout)
	case *actor.ReceiveTimeout:
		// Passivation: the session stays on the runtime until its own
		// idle timeout; the next request activates a new grain.
		c.Poison(c.Self())
	case *actor.Stopped:
		g.cancel()
	case *anypb.Any:
		g.handle(c, msg)
	}
}

// handle decodes an envelope and answers it.
func (g *grain) handle(c actor.Context, env *anypb.Any) {
	sender := c.Sender()
	if sender == nil {
		return
	}
	v, err := g.m.wire.Decode(env)
	if err != nil {
		g.m.logger.Warn().Err(err).Str("session", g.id).Msg("cluster: undecodable message")
		g.respond(sender, &UnknownReply{Member: g.m.addr, Type: env.GetTypeUrl()})
		return
	}
	switch msg := v.(type) {
	case *SubmitTurn:
		g.submit(sender, msg)
	case *StatusRequest:
		go g.status(sender)
	case *CancelTurn:
		go g.cancelTurn(sender)
	default:
		g.respond(sender, &UnknownReply{Member: g.m.addr, Type: env.GetTypeUrl()})
	}
}

// submit starts the turn of msg.TurnID unless this grain runs it already,
// and answers once it ends or msg.Wait has passed.
func (g *grain) submit(sender *actor.PID, msg *SubmitTurn) {
	if msg.TurnID == "" {
		g.respond(sender, &TurnReply{Member: g.m.addr, Error: "cluster: SubmitTurn without turn_id"})
		return
	}
	wait := min(max(msg.Wait, 0), maxWait)
	g.mu.Lock()
	run := g.turns[msg.TurnID]
	if run == nil {
		run = &turnRun{done: make(chan struct{})}
		g.turns[msg.TurnID] = run
		go g.run(msg, run)
	}
	g.mu.Unlock()
	go func() {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-run.done:
			reply := run.reply
			g.respond(sender, &reply)
		case <-timer.C:
			g.respond(sender, &TurnReply{Member: g.m.addr, Pending: true})
		case <-g.ctx.Done():
		}
	}()
}

// run runs a turn on the member's runtime and records how it ended.
func (g *grain) run(msg *SubmitTurn, run *turnRun) {
	reply := TurnReply{Member: g.m.addr}
	sess, err := g.m.cfg.Runtime.Open(g.m.ctx, g.id)
	if err == nil {
		var res *actors.TurnResult
		res, err = sess.Submit(g.m.ctx, messages.UserText(msg.Text), actors.WithTurnID(msg.TurnID))
		reply.Result = res
	}
	if err != nil {
		reply.Error = err.Error()
		if errors.Is(err, memory.ErrFenced) {
			reply.Fenced = true
			g.m.logger.Info().Str("session", g.id).Str("turn_id", msg.TurnID).Msg("cluster: session fenced by a newer activation; its copy here stopped")
		}
	}
	g.mu.Lock()
	run.reply = reply
	delete(g.turns, msg.TurnID)
	g.mu.Unlock()
	close(run.done)
}

func (g *grain) status(sender *actor.PID) {
	reply := &StatusReply{Member: g.m.addr}
	sess, err := g.m.cfg.Runtime.Open(g.ctx, g.id)
	if err == nil {
		reply.Status, err = sess.Status(g.ctx)
	}
	if err != nil {
		reply.Error = err.Error()
	}
	g.respond(sender, reply)
}

func (g *grain) cancelTurn(sender *actor.PID) {
	reply := &CancelReply{Member: g.m.addr}
	sess, err := g.m.cfg.Runtime.Open(g.ctx, g.id)
	if err == nil {
		reply.Cancelled, err = sess.Cancel(g.ctx)
	}
	if err != nil {
		reply.Error = err.Error()
	}
	g.respond(sender, reply)
}

// respond sends v, wrapped, to the caller. It is called from the grain's
// goroutines as well as from Receive, so it sends through the actor
// system's root context.
func (g *grain) respond(to *actor.PID, v any) {
	env, err := g.m.wire.Encode(v)
	if err != nil {
		g.m.logger.Error().Err(err).Str("session", g.id).Msg("cluster: reply not encodable")
		return
	}
	g.m.cl.ActorSystem.Root.Send(to, env)
}
