package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/toolsys"
)

// Ack is a user message the runtime acknowledged: its turn started, so the
// message was journaled durably before the caller heard of it.
type Ack struct {
	// Session is the session the message went to.
	Session string `json:"session"`
	// TurnID is the client turn id it was submitted with. Empty means it is
	// recognised by Text alone.
	TurnID string `json:"turn_id,omitempty"`
	// Text is the message's text.
	Text string `json:"text"`
}

// CheckOptions says what Check holds the journals to. The zero value
// checks every session, allows no tool call to start twice, and accepts a
// turn left open when it can be resumed.
type CheckOptions struct {
	// Sessions limits the check to these sessions. Empty means every
	// session of the journal.
	Sessions []string
	// Acknowledged are the user messages the runtime acknowledged, in the
	// order each session acknowledged them. Each must be journaled exactly
	// once, in that order. Nil checks no acknowledgement.
	Acknowledged []Ack
	// Rerunnable reports whether calls of the named tool may run again
	// after an interruption (the tool is idempotent or read-only), so that
	// one call started twice is not a violation. Nil means no tool may:
	// pass RerunnableIn(tools) to follow the tools' own declarations, as
	// the runtime does.
	Rerunnable func(tool string) bool
	// Settled says that the runtime that wrote the journals shut down
	// cleanly after its last turns: no turn may be left open, and every
	// tool call must have its result. False accepts an open turn that the
	// session can resume (a process killed mid-turn).
	Settled bool
}

// Getter is the part of a tool set the checker needs: actors.Tools and
// *toolsys.Registry implement it.
type Getter interface {
	Get(name string) (toolsys.Tool, bool)
}

// RerunnableIn returns the Rerunnable of CheckOptions that follows the
// tools' own declarations, as the runtime does: a call may run again when
// its tool is idempotent or at most read-only. A tool missing from tools
// may not.
func RerunnableIn(tools Getter) func(string) bool {
	return func(name string) bool {
		t, ok := tools.Get(name)
		return ok && (t.Idempotent() || t.Permission() <= toolsys.PermReadOnly)
	}
}

// Report is what Check found.
type Report struct {
	// Sessions counts the journals checked and Entries their entries.
	Sessions int `json:"sessions"`
	Entries  int `json:"entries"`
	// Turns counts the turns that ended, by outcome ("completed",
	// "failed", "cancelled", ...), and OpenTurns those left open.
	Turns     map[string]int `json:"turns"`
	OpenTurns int            `json:"open_turns"`
	// FailReasons counts the failed turns by the class of the reason they
	// give: the kind of provider failure it names, or its first clause.
	FailReasons map[string]int `json:"fail_reasons,omitempty"`
	// ToolCalls counts the tool calls the models made. Reruns counts the
	// calls of re-runnable tools started more than once (run again after
	// a restart), and Interrupted the calls answered as interrupted (not
	// run again, because their tool may not be).
	ToolCalls   int `json:"tool_calls"`
	Reruns      int `json:"reruns"`
	Interrupted int `json:"interrupted"`
	// Acknowledged counts the acknowledgements checked.
	Acknowledged int `json:"acknowledged"`
	// Violations are the broken invariants, by session then sequence.
	Violations []Violation `json:"violations"`
}

// OK reports whether no invariant is broken.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

// Check reads every journal of j (or those opts names) entry by entry and
// returns the invariants they break; see the Inv constants. It changes
// nothing. An error means the check could not be made (ctx done, storage
// failing); a journal that is damaged is a violation, not an error.
func Check(ctx context.Context, j memory.Journal, opts CheckOptions) (*Report, error) {
	rep := &Report{Turns: map[string]int{}, FailReasons: map[string]int{}, Violations: []Violation{}}
	ids := slices.Clone(opts.Sessions)
	if len(ids) == 0 {
		for id, err := range j.Sessions(ctx) {
			if err != nil {
				return nil, fmt.Errorf("chaos: list sessions: %w", err)
			}
			ids = append(ids, id)
		}
	}
	acks := map[string][]Ack{}
	for _, a := range opts.Acknowledged {
		acks[a.Session] = append(acks[a.Session], a)
		if !slices.Contains(ids, a.Session) {
			ids = append(ids, a.Session)
		}
	}
	rerunnable := opts.Rerunnable
	if rerunnable == nil {
		rerunnable = func(string) bool { return false }
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a := &audit{session: id, rerunnable: rerunnable, settled: opts.Settled, rep: rep}
		if err := a.run(ctx, j, acks[id]); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(rep.Violations, func(x, y Violation) int {
		if c := strings.Compare(x.Session, y.Session); c != 0 {
			return c
		}
		return int(x.Seq) - int(y.Seq)
	})
	return rep, nil
}

// userEntry is a journaled user message.
type userEntry struct {
	turnID, text string
	seq          uint64
}

// call is a tool call of an assistant message, and what became of it.
type call struct {
	name             string
	turn             int
	seq              uint64
	started, results int
}

// audit reads one session's journal.
type audit struct {
	session    string
	rerunnable func(string) bool
	settled    bool
	rep        *Report

	users   []userEntry
	turnIDs map[string]uint64
	calls   map[string]*call
	order   []string
	ends    map[int]uint64
	// completed holds the seq of each turn's TurnCompleted.
	completed map[int]uint64
}

func (a *audit) violate(seq uint64, inv Invariant, format string, args ...any) {
	a.rep.Violations = append(a.rep.Violations, Violation{Session: a.session, Seq: seq, Invariant: inv, Problem: fmt.Sprintf(format, args...)})
}

func callKey(turn int, id string) string { return fmt.Sprintf("%d/%s", turn, id) }

// run audits the session against acks.
func (a *audit) run(ctx context.Context, j memory.Journal, acks []Ack) error {
	a.turnIDs, a.calls, a.ends, a.completed = map[string]uint64{}, map[string]*call{}, map[int]uint64{}, map[int]uint64{}
	tail, err := j.Tail(ctx, a.session)
	if err != nil {
		return fmt.Errorf("chaos: tail of %s: %w", a.session, err)
	}
	if tail == 0 {
		for _, ack := range acks {
			a.violate(0, InvAckPresent, "acknowledged message %q (turn id %q) is missing: the session has no journal", ack.Text, ack.TurnID)
			a.rep.Acknowledged++
		}
		return nil
	}
	a.rep.Sessions++
	var last uint64
	readable := true
	for e, err := range j.Read(ctx, a.session, 1) {
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			seq := last + 1
			if ee, ok := errors.AsType[*memory.EntryError](err); ok {
				seq = ee.Seq
			}
			a.violate(seq, InvJournalReadable, "entry cannot be read: %v", err)
			readable = false
			break
		}
		a.rep.Entries++
		seq := e.Envelope.Seq
		if seq != last+1 {
			a.violate(seq, InvSequence, "entry %d follows entry %d", seq, last)
		}
		last = seq
		a.entry(seq, e.Event)
	}
	if readable && last != tail {
		a.violate(last+1, InvSequence, "the journal's tail is %d but its entries stop at %d", tail, last)
	}
	a.finish(acks)
	st, err := j.Load(ctx, a.session)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		a.violate(0, InvTurnResumable, "the journal does not load, so the session cannot resume: %v", err)
	case st.Open != nil && a.settled:
		a.violate(0, InvTurnResumable, "turn %d is still open after the runtime settled", st.Open.Turn)
	case st.Open != nil:
		a.rep.OpenTurns++
	}
	if err == nil && len(st.History) > 0 {
		if verr := messages.Validate(st.Messages(memory.ViewOptions{})); verr != nil {
			a.violate(0, InvHistory, "the history is not a valid model request: %v", verr)
		}
	}
	return nil
}

// entry takes in one journal entry.
func (a *audit) entry(seq uint64, ev messages.JournalEvent) {
	switch e := ev.(type) {
	case messages.UserMessage:
		a.users = append(a.users, userEntry{turnID: e.TurnID, text: e.Message.Text(), seq: seq})
		if e.TurnID != "" {
			if first, dup := a.turnIDs[e.TurnID]; dup {
				a.violate(seq, InvTurnIDOnce, "client turn id %q journaled again (first at seq %d)", e.TurnID, first)
			} else {
				a.turnIDs[e.TurnID] = seq
			}
		}
	case messages.AssistantMessage:
		for _, c := range e.Message.ToolCalls {
			k := callKey(e.Turn, c.ID)
			if _, dup := a.calls[k]; !dup {
				a.order = append(a.order, k)
			}
			a.calls[k] = &call{name: c.Name, turn: e.Turn, seq: seq}
			a.rep.ToolCalls++
		}
	case messages.ToolCallStarted:
		c := a.calls[callKey(e.Turn, e.CallID)]
		if c == nil {
			a.violate(seq, InvToolAnswered, "call %s of turn %d (%s) started but no assistant message made it", e.CallID, e.Turn, e.Name)
			return
		}
		c.started++
		if c.started == 2 {
			if a.rerunnable(c.name) {
				a.rep.Reruns++
			} else {
				a.violate(seq, InvToolStartedOnce, "call %s of turn %d started again, but %s is neither idempotent nor read-only", e.CallID, e.Turn, c.name)
			}
		}
	case messages.ToolResult:
		c := a.calls[callKey(e.Turn, e.CallID)]
		if c == nil {
			a.violate(seq, InvToolAnswered, "result for call %s of turn %d (%s), which no assistant message made", e.CallID, e.Turn, e.Name)
			return
		}
		c.results++
		if c.results > 1 {
			a.violate(seq, InvToolAnswered, "call %s of turn %d (%s) answered %d times", e.CallID, e.Turn, c.name, c.results)
		}
		if strings.HasPrefix(e.Content, memory.InterruptedResult) {
			a.rep.Interrupted++
		}
	case messages.TurnCompleted:
		a.end(seq, e.Turn, string(e.Outcome))
		a.completed[e.Turn] = seq
		if e.Outcome == messages.OutcomeFailed {
			a.rep.FailReasons[reasonClass(e.Reason)]++
		}
	case messages.TurnCancelled:
		a.end(seq, e.Turn, "cancelled")
	}
}

// end records the end of turn.
func (a *audit) end(seq uint64, turn int, outcome string) {
	if first, dup := a.ends[turn]; dup {
		a.violate(seq, InvTurnEndedOnce, "turn %d ended again (first at seq %d)", turn, first)
		return
	}
	a.ends[turn] = seq
	a.rep.Turns[outcome]++
}

// finish checks what the whole journal says: the calls without a result
// and the acknowledgements.
func (a *audit) finish(acks []Ack) {
	for _, k := range a.order {
		c := a.calls[k]
		if c.results > 0 {
			continue
		}
		if seq, ok := a.completed[c.turn]; ok {
			a.violate(seq, InvToolAnswered, "turn %d completed but call %s (%s) has no result", c.turn, strings.TrimPrefix(k, fmt.Sprintf("%d/", c.turn)), c.name)
		} else if _, cancelled := a.ends[c.turn]; cancelled {
			a.rep.Interrupted++ // the cancelled turn's view answers it as interrupted
		}
	}
	pos := -1
	for _, ack := range acks {
		a.rep.Acknowledged++
		var found []int
		for i, u := range a.users {
			if (ack.TurnID != "" && u.turnID == ack.TurnID) || (ack.TurnID == "" && u.text == ack.Text) {
				found = append(found, i)
			}
		}
		switch {
		case len(found) == 0:
			a.violate(0, InvAckPresent, "acknowledged message %q (turn id %q) is not in the journal", ack.Text, ack.TurnID)
			continue
		case len(found) > 1:
			a.violate(a.users[found[1]].seq, InvAckPresent, "acknowledged message %q (turn id %q) is journaled %d times", ack.Text, ack.TurnID, len(found))
		}
		u := a.users[found[0]]
		if u.text != ack.Text {
			a.violate(u.seq, InvAckPresent, "turn id %q journaled with text %q, acknowledged with %q", ack.TurnID, u.text, ack.Text)
		}
		if found[0] < pos {
			a.violate(u.seq, InvAckOrder, "acknowledged message %q is journaled before one acknowledged earlier", ack.Text)
		}
		pos = max(pos, found[0])
	}
}

// reasonClass names the class of a failure reason, so that reasons that
// differ only in detail count together: the kind of provider failure it
// names ("rate limited", "server error", ...), or else its first clause.
func reasonClass(reason string) string {
	for k := providers.KindOther + 1; k <= providers.KindUnavailable; k++ {
		if strings.Contains(reason, ": "+k.String()) {
			return k.String()
		}
	}
	if reason == "" {
		return "unknown"
	}
	if i := strings.IndexAny(reason, ":("); i > 0 {
		reason = reason[:i]
	}
	return strings.TrimSpace(reason)
}
