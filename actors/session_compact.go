package actors

// This file holds the session actor's side of compaction: when to ask the
// compactor service, and journaling its answer.

import (
	"fmt"
	"slices"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// maybeCompact asks the compactor for a compaction, between turns, when
// the history has reached the threshold.
func (a *sessionActor) maybeCompact() {
	if a.needsCompaction() {
		a.requestCompaction(false, false)
	}
}

// compactRound asks the compactor for a compaction after a tool round,
// when the history has reached the threshold, and reports whether it did:
// the turn's next model call then waits for it, so that a long tool loop
// does not overflow the context mid-turn.
func (a *sessionActor) compactRound() bool {
	if !a.needsCompaction() {
		return false
	}
	a.requestCompaction(true, false)
	return true
}

// needsCompaction reports whether the history has reached the threshold
// and no compaction is under way.
func (a *sessionActor) needsCompaction() bool {
	if a.rt.cfg.Compaction.Disabled || a.compacting {
		return false
	}
	return memory.ShouldCompact(a.st.Messages(memory.ViewOptions{}), a.rt.cfg.Compaction.Config, &a.breaker)
}

// requestCompaction sends the history to the compactor. forTurn says that
// the running turn waits for it to ask the model again; force says that a
// context-length error asked for it: the compactor then summarises when it
// can, and a failure fails the turn.
func (a *sessionActor) requestCompaction(forTurn, force bool) {
	a.compacting = true
	req := &compactReq{
		session: a.id, history: slices.Clone(a.st.History), seqs: slices.Clone(a.st.HistorySeq),
		replyTo: a.actx.Self(), gen: a.c.gen, forTurn: forTurn, force: force,
	}
	if a.turn != nil {
		req.parent = a.turn.span.SpanContext()
	}
	// The compactor works on what is durable.
	a.after(func() { a.rt.system.Root.Send(a.rt.compactor, req) })
}

// onCompactDone journals a compaction, or records its failure.
func (a *sessionActor) onCompactDone(m *compactDone) {
	a.compacting = false
	waiting := m.forTurn && a.turn != nil && m.gen == a.c.gen
	if m.err != nil {
		a.breaker.Failure()
		a.log.Warn().Err(m.err).Int("failures", a.breaker.Failures()).Msg("compaction failed")
		switch {
		case waiting && m.force:
			a.failTurn(fmt.Errorf("context length exceeded and compaction failed: %w", m.err))
		case waiting:
			// The turn goes on with the history as it is; a context-length
			// refusal would still compact once and retry.
			a.requestModel()
		}
		return
	}
	a.breaker.Success()
	a.stage(*m.event)
	ev := messages.ContextCompacted{EventMeta: a.meta(), Kind: m.event.Kind, TokensBefore: m.event.TokensBefore, TokensAfter: m.event.TokensAfter}
	a.publish(ev)
	ctx := a.rt.ctx
	if a.turn != nil {
		ctx = a.turn.ctx
	}
	a.hook(ctx, HookContext{Event: OnCompact, Compaction: &ev})
	a.log.Info().Str("kind", ev.Kind).Int("before", ev.TokensBefore).Int("after", ev.TokensAfter).Dur("took", m.elapsed).Msg("history compacted")
	if waiting {
		a.requestModel()
	}
}
