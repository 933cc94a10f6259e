package actors

// This file holds the MCP servers' questions (elicitation/create) as the
// outside sees them: PendingElicitation, Runtime.Elicitations and
// Runtime.AnswerElicitation, and the router that mcp.Conn calls for each
// question when no library callback answers them (ServerConfig.Elicit).
// A question attributed to a session is that session's (session_elicit.go);
// any other waits in the runtime's own list.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agcore/agcore/toolsys/mcp"
)

// Who answered a question, as journaled in ElicitationResolved.By.
const (
	// AnsweredByCaller marks an answer given through
	// Runtime.AnswerElicitation.
	AnsweredByCaller = "caller"
	// AnsweredByRuntime marks a cancellation the runtime made: the
	// question expired, or its turn ended first.
	AnsweredByRuntime = "runtime"
)

// ErrUnknownElicitation is returned by Runtime.AnswerElicitation when no
// such question is pending (unknown session or id, already answered,
// expired).
var ErrUnknownElicitation = errors.New("actors: no such pending question")

// PendingElicitation is an MCP server's question waiting for an answer.
type PendingElicitation struct {
	// ID identifies the question in Runtime.AnswerElicitation.
	ID string
	// Session is the session the question belongs to, or "" when it could
	// not be attributed to one: it then waits in the runtime's list, for
	// whoever may answer for every session in Candidates.
	Session string
	// Turn is the session's turn during which the question was asked.
	Turn int
	// CallID is the tool call the question belongs to, when that is known.
	CallID string
	// Candidates are the sessions that had calls in flight on the server
	// when it asked.
	Candidates []string
	// Exact says the transport tied the question to its call.
	Exact   bool
	Server  string
	Message string
	// Mode is "form" (answer Schema) or "url" (open URL).
	Mode   string
	Schema *jsonschema.Schema
	URL    string
	// Requested is when the question was asked; Expires is when it is
	// cancelled if no one answers (mcp.ServerConfig.ElicitTimeout).
	Requested time.Time
	Expires   time.Time
}

// Fields returns the names of the form's fields, sorted.
func (p PendingElicitation) Fields() []string {
	return mcp.Elicitation{Schema: p.Schema}.Fields()
}

// elicitWait is a question waiting for its answer. The session actor (or,
// for a question of no session, the runtime's list) decides it once.
type elicitWait struct {
	info   PendingElicitation
	answer chan mcp.ElicitAnswer // buffered (1): written once
}

// elicitList is the runtime's list of the questions no session owns.
type elicitList struct {
	mu      sync.Mutex
	n       uint64
	pending map[string]*elicitWait
	changed chan struct{} // closed and replaced when the list changes
}

// changedLocked wakes the waiters of ElicitationsChanged; l.mu is held.
func (l *elicitList) changedLocked() {
	if l.changed != nil {
		close(l.changed)
	}
	l.changed = make(chan struct{})
}

// watch returns a channel closed at the list's next change.
func (l *elicitList) watch() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// newID returns a new question id, unique in the runtime.
func (l *elicitList) newID(rt *Runtime) string {
	l.mu.Lock()
	l.n++
	n := l.n
	l.mu.Unlock()
	return "el-" + rt.ids.NewID() + "-" + strconv.FormatUint(n, 10)
}

// add puts w in the list.
func (l *elicitList) add(w *elicitWait) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = map[string]*elicitWait{}
	}
	l.pending[w.info.ID] = w
	l.changedLocked()
}

// take removes and returns the question id, or nil.
func (l *elicitList) take(id string) *elicitWait {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.pending[id]
	if w != nil {
		delete(l.pending, id)
		l.changedLocked()
	}
	return w
}

// list returns the pending questions.
func (l *elicitList) list() []PendingElicitation {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]PendingElicitation, 0, len(l.pending))
	for _, w := range l.pending {
		out = append(out, w.info)
	}
	return out
}

// mcpElicit returns the ElicitFunc the runtime gives a server when no
// library callback answers its questions: a question attributed to a
// live session becomes a pending question of that session (journaled,
// published as ElicitationPending, answered through
// Runtime.AnswerElicitation); any other waits in the runtime's list. A
// question no one answers before ctx ends (mcp.ServerConfig.ElicitTimeout),
// its session stops or the runtime shuts down is cancelled.
func (rt *Runtime) mcpElicit() mcp.ElicitFunc {
	return func(ctx context.Context, q mcp.Elicitation) (mcp.ElicitAnswer, error) {
		now := rt.clock.Now()
		w := &elicitWait{info: PendingElicitation{
			ID: rt.mcp.elicits.newID(rt), Session: q.Session, CallID: q.CallID, Candidates: slices.Clone(q.Candidates),
			Exact: q.Exact, Server: q.Server, Message: q.Message, Mode: q.Mode, Schema: q.Schema, URL: q.URL, Requested: now,
		}, answer: make(chan mcp.ElicitAnswer, 1)}
		if dl, ok := ctx.Deadline(); ok {
			w.info.Expires = dl
		}
		var ref *sessionRef
		if q.Session != "" {
			ref = rt.postLive(q.Session, &elicitAskCmd{wait: w})
		}
		if ref == nil {
			w.info.Session, w.info.CallID = "", ""
			rt.mcp.elicits.add(w)
			rt.logger.Info().Str("mcp_server", q.Server).Str("elicitation", w.info.ID).Strs("candidates", q.Candidates).
				Msg("mcp: a question of no single session waits in the runtime's list")
		}
		var stopped <-chan struct{}
		if ref != nil {
			stopped = ref.done
		}
		reason := ""
		select {
		case ans := <-w.answer:
			return ans, nil
		case <-stopped:
			return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
		case <-rt.mcp.closing:
			reason = "the runtime is shutting down"
		case <-ctx.Done():
			reason = "the server withdrew the question, or its call ended"
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				reason = fmt.Sprintf("the question expired: no answer within %v", w.info.Expires.Sub(now).Round(time.Millisecond))
			}
		}
		if ref == nil {
			if rt.mcp.elicits.take(w.info.ID) != nil {
				return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
			}
		} else {
			reply := make(chan error, 1)
			rt.postRef(ref, &elicitAnswerCmd{id: w.info.ID, ans: mcp.ElicitAnswer{Action: mcp.ElicitCancel},
				by: AnsweredByRuntime, reason: reason, reply: reply})
			select {
			case <-reply:
			case <-ref.done:
			}
		}
		select {
		case ans := <-w.answer: // decided before the expiry was
			return ans, nil
		default:
			return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
		}
	}
}

// Elicitations returns the MCP servers' questions waiting for an answer:
// those of every active session, by session then age, then those of no
// single session (Session ""), by age.
func (rt *Runtime) Elicitations() []PendingElicitation {
	if rt.mcp == nil {
		return []PendingElicitation{}
	}
	type asked struct {
		ref   *sessionRef
		reply chan []PendingElicitation
	}
	var all []asked
	for _, ref := range rt.liveRefs() {
		reply := make(chan []PendingElicitation, 1)
		if rt.postLive(ref.id, &elicitationsCmd{reply: reply}) == ref {
			all = append(all, asked{ref, reply})
		}
	}
	out := []PendingElicitation{}
	for _, a := range all {
		select {
		case ps := <-a.reply:
			out = append(out, ps...)
		case <-a.ref.done:
		}
	}
	slices.SortStableFunc(out, func(x, y PendingElicitation) int { return cmp.Compare(x.Session, y.Session) })
	rest := rt.mcp.elicits.list()
	sortElicitations(rest)
	return append(out, rest...)
}

// ElicitationsChanged returns a channel that is closed at the next change
// of the questions of no single session (one is added, answered or
// expires): a front end that answers them waits on it, then reads
// Elicitations. The questions of sessions are announced on their streams
// (messages.ElicitationPending) instead.
func (rt *Runtime) ElicitationsChanged() <-chan struct{} {
	if rt.mcp == nil {
		return make(chan struct{})
	}
	return rt.mcp.elicits.watch()
}

// sortElicitations sorts ps by age, then id.
func sortElicitations(ps []PendingElicitation) {
	slices.SortFunc(ps, func(x, y PendingElicitation) int {
		return cmp.Or(x.Requested.Compare(y.Requested), cmp.Compare(x.ID, y.ID))
	})
}

// AnswerElicitation answers the pending question id of session (""
// for a question of no single session). An accepted form answer is
// checked against the question's schema, with its defaults applied: one
// that does not fit fails with an error wrapping mcp.ErrElicitationInvalid
// that names the field, and the question stays pending. The answer of a
// session's question is journaled (ElicitationResolved, By
// AnsweredByCaller: the action and the names of the fields, never their
// values) before the server gets it. It fails with ErrUnknownElicitation
// when no such question is pending, and with ErrClosed after Shutdown.
func (rt *Runtime) AnswerElicitation(ctx context.Context, session, id string, ans mcp.ElicitAnswer) error {
	rt.mu.Lock()
	closed := rt.closed
	rt.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := checkAction(ans.Action); err != nil {
		return err
	}
	if rt.mcp == nil {
		return fmt.Errorf("%w: session %q question %s", ErrUnknownElicitation, session, id)
	}
	if session == "" {
		return rt.answerUnowned(id, ans)
	}
	reply := make(chan error, 1)
	ref := rt.postLive(session, &elicitAnswerCmd{id: id, ans: ans, by: AnsweredByCaller, reply: reply})
	if ref == nil {
		return fmt.Errorf("%w: session %s question %s", ErrUnknownElicitation, session, id)
	}
	select {
	case err := <-reply:
		return err
	case <-ref.done:
		return fmt.Errorf("%w: session %s question %s: the session stopped", ErrUnknownElicitation, session, id)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answerUnowned answers a question of the runtime's list.
func (rt *Runtime) answerUnowned(id string, ans mcp.ElicitAnswer) error {
	l := &rt.mcp.elicits
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.pending[id]
	if w == nil {
		return fmt.Errorf("%w: question %s of no single session", ErrUnknownElicitation, id)
	}
	checked, err := checkAnswer(w.info, ans)
	if err != nil {
		return err
	}
	delete(l.pending, id)
	l.changedLocked()
	w.answer <- checked
	rt.logger.Info().Str("elicitation", id).Str("action", string(checked.Action)).
		Strs("fields", slices.Sorted(maps.Keys(checked.Content))).Msg("mcp: a question of no single session was answered")
	return nil
}

// checkAction refuses an action that is not accept, decline or cancel.
func checkAction(a mcp.ElicitAction) error {
	switch a {
	case mcp.ElicitAccept, mcp.ElicitDecline, mcp.ElicitCancel:
		return nil
	}
	return fmt.Errorf("%w: action %q: want accept, decline or cancel", mcp.ErrElicitationInvalid, a)
}

// checkAnswer validates an accepted form answer against the question's
// schema and applies its defaults; other answers carry no content.
func checkAnswer(q PendingElicitation, ans mcp.ElicitAnswer) (mcp.ElicitAnswer, error) {
	if ans.Action != mcp.ElicitAccept {
		return mcp.ElicitAnswer{Action: ans.Action}, nil
	}
	if q.Mode != "form" {
		return mcp.ElicitAnswer{Action: mcp.ElicitAccept}, nil
	}
	content, err := mcp.ApplyElicitationSchema(q.Schema, ans.Content)
	if err != nil {
		return mcp.ElicitAnswer{}, fmt.Errorf("question %s of mcp server %s: %w", q.ID, q.Server, err)
	}
	return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: content}, nil
}
