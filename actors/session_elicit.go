package actors

// This file holds the MCP servers' questions inside the session actor: a
// question attributed to the session (runtime_elicit.go) is journaled
// (ElicitationRequested) and published (ElicitationPending); the first
// answer, or its expiry, is journaled (ElicitationResolved) and published
// (ElicitationAnswered) before the server gets it.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys/mcp"
)

// elicitMsg marks the messages of this file, which the session actor
// hands to onElicit.
type elicitMsg interface{ isElicitMsg() }

// elicitAskCmd puts a question to the session.
type elicitAskCmd struct{ wait *elicitWait }

// elicitAnswerCmd answers the pending question id: an answer of
// Runtime.AnswerElicitation, or the runtime's cancellation of a question
// that expired.
type elicitAnswerCmd struct {
	id     string
	ans    mcp.ElicitAnswer
	by     string
	reason string
	reply  chan error
}

// elicitationsCmd asks for the session's pending questions.
type elicitationsCmd struct{ reply chan []PendingElicitation }

func (*elicitAskCmd) isCommand()      {}
func (*elicitAnswerCmd) isCommand()   {}
func (*elicitationsCmd) isCommand()   {}
func (*elicitAskCmd) isElicitMsg()    {}
func (*elicitAnswerCmd) isElicitMsg() {}
func (*elicitationsCmd) isElicitMsg() {}

// onElicit handles the messages of this file.
func (a *sessionActor) onElicit(m elicitMsg) {
	switch m := m.(type) {
	case *elicitAskCmd:
		a.onElicitAsk(m.wait)
	case *elicitAnswerCmd:
		a.onElicitAnswer(m)
	case *samplingAskCmd:
		a.onSamplingAsk(m)
	case *samplingDoneCmd:
		a.onSamplingDone(m)
	case *elicitationsCmd:
		out := make([]PendingElicitation, 0, len(a.elicits))
		for _, w := range a.elicits {
			out = append(out, w.info)
		}
		sortElicitations(out)
		m.reply <- out
	}
}

// onElicitAsk journals and publishes a question asked during the running
// turn; one that arrives between turns is cancelled, as no call of the
// session can be waiting for it.
func (a *sessionActor) onElicitAsk(w *elicitWait) {
	if a.turn == nil {
		w.answer <- mcp.ElicitAnswer{Action: mcp.ElicitCancel}
		a.log.Info().Str("elicitation", w.info.ID).Msg("mcp question cancelled: no turn is running")
		return
	}
	w.info.Turn = a.turn.index
	info := w.info
	fields := info.Fields()
	a.stage(messages.ElicitationRequested{Turn: info.Turn, ID: info.ID, Server: info.Server, CallID: info.CallID,
		Message: info.Message, Mode: info.Mode, Fields: fields, URL: info.URL})
	if a.elicits == nil {
		a.elicits = make(map[string]*elicitWait)
	}
	a.elicits[info.ID] = w
	a.publish(messages.ElicitationPending{EventMeta: a.meta(), ID: info.ID, Server: info.Server, CallID: info.CallID,
		Message: info.Message, Mode: info.Mode, Fields: fields, URL: info.URL, Expires: info.Expires})
	a.log.Info().Str("elicitation", info.ID).Str("mcp_server", info.Server).Str("call", info.CallID).Msg("mcp question pending")
}

// onElicitAnswer decides a pending question, if it still is pending and
// the answer fits its schema.
func (a *sessionActor) onElicitAnswer(m *elicitAnswerCmd) {
	w := a.elicits[m.id]
	if w == nil {
		m.reply <- fmt.Errorf("%w: session %s question %s", ErrUnknownElicitation, a.id, m.id)
		return
	}
	ans, err := checkAnswer(w.info, m.ans)
	if err != nil {
		m.reply <- err
		return
	}
	a.resolveElicit(w, ans, m.by, m.reason)
	a.after(func() { m.reply <- nil })
}

// resolveElicit journals the answer to w and, once it is durable, hands it
// to the server.
func (a *sessionActor) resolveElicit(w *elicitWait, ans mcp.ElicitAnswer, by, reason string) {
	id := w.info.ID
	fields := slices.Sorted(maps.Keys(ans.Content))
	a.stage(messages.ElicitationResolved{ID: id, Action: string(ans.Action), By: by, Fields: fields, Reason: reason})
	delete(a.elicits, id)
	a.publish(messages.ElicitationAnswered{EventMeta: a.meta(), ID: id, Action: string(ans.Action), By: by})
	a.after(func() { w.answer <- ans })
	a.log.Info().Str("elicitation", id).Str("action", string(ans.Action)).Str("by", by).Strs("fields", fields).Msg("mcp question answered")
}

// cancelElicitations cancels every pending question of the session,
// because the turn ended.
func (a *sessionActor) cancelElicitations(reason string) {
	if len(a.elicits) == 0 {
		return
	}
	ws := slices.Collect(maps.Values(a.elicits))
	slices.SortFunc(ws, func(x, y *elicitWait) int { return cmp.Compare(x.info.ID, y.info.ID) })
	for _, w := range ws {
		a.resolveElicit(w, mcp.ElicitAnswer{Action: mcp.ElicitCancel}, AnsweredByRuntime, reason)
	}
}

// Elicitations returns the MCP servers' questions pending in the session,
// oldest first. A session that is not active has none.
func (s *Session) Elicitations(ctx context.Context) ([]PendingElicitation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	reply := make(chan []PendingElicitation, 1)
	ref := s.rt.postLive(s.id, &elicitationsCmd{reply: reply})
	if ref == nil {
		return []PendingElicitation{}, nil
	}
	select {
	case ps := <-reply:
		return ps, nil
	case <-ref.done:
		return []PendingElicitation{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// AnswerElicitation answers the session's pending question id, as
// Runtime.AnswerElicitation does.
func (s *Session) AnswerElicitation(ctx context.Context, id string, ans mcp.ElicitAnswer) error {
	return s.rt.AnswerElicitation(ctx, s.id, id, ans)
}
