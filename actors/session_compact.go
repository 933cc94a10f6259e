package actors

// This file holds the session actor's side of compaction: when to ask the
// compactor service, and journaling its answer.

import (
	"fmt"
	"slices"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// maybeCompact asks the compactor for a compaction when the history has
// reached the threshold.
func (a *sessionActor) maybeCompact() {
	if a.rt.cfg.Compaction.Disabled || a.compacting {
		return
	}
	if !memory.ShouldCompact(a.st.Messages(memory.ViewOptions{}), a.rt.cfg.Compaction.Config, &a.breaker) {
		return
	}
	a.requestCompaction(false)
}

// requestCompaction sends the history to the compactor. forTurn says that
// the running turn waits for it (a context-length error) to retry its model
// call.
func (a *sessionActor) requestCompaction(forTurn bool) {
	a.compacting = true
	req := &compactReq{
		session: a.id, history: slices.Clone(a.st.History), seqs: slices.Clone(a.st.HistorySeq),
		replyTo: a.actx.Self(), gen: a.c.gen, forTurn: forTurn,
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
		if waiting {
			a.failTurn(fmt.Errorf("context length exceeded and compaction failed: %w", m.err))
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
	a.hook(ctx, &HookContext{Event: OnCompact, Compaction: &ev})
	a.log.Info().Str("kind", ev.Kind).Int("before", ev.TokensBefore).Int("after", ev.TokensAfter).Dur("took", m.elapsed).Msg("history compacted")
	if waiting {
		a.requestModel()
	}
}
