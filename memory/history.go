package memory

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/agcore/agcore/messages"
)

// InterruptedResult is the content of the tool message that answers a tool
// call which never got a result (the turn was cancelled, failed or crashed).
const InterruptedResult = "interrupted: the tool call did not complete"

// MaxTurnIDs bounds State.TurnIDs: when it is full, the id of the oldest turn
// is forgotten.
const MaxTurnIDs = 1024

// ErrOutOfOrder is returned by State.Apply for an entry whose sequence number
// is not after the state's.
var ErrOutOfOrder = errors.New("memory: journal entry out of order")

// State is the fold of a session's journal: the conversation history and
// everything a session actor needs to carry on, or to resume a turn that was
// in progress when it crashed. Build one with Journal.Load, or fold entries
// into a zero State with Apply. A State is not safe for concurrent use.
type State struct {
	// Seq is the sequence number of the last entry folded in.
	Seq uint64 `json:"seq"`
	// Activation is the session's current activation number.
	Activation uint64 `json:"activation"`
	// Turn is the index of the next turn.
	Turn int `json:"turn"`
	// History is the stored conversation: user, assistant and tool messages,
	// never system or developer messages. Tool messages of one assistant
	// message sit right after it, in call order; a call may lack its result
	// (see Messages for the provider-ready view).
	History []messages.Message `json:"history"`
	// HistorySeq[i] is the sequence number of the entry that put History[i]
	// in its place. It never decreases, so the messages produced by entries up
	// to seq N are exactly those with HistorySeq <= N (see CompactedEvent).
	HistorySeq []uint64 `json:"history_seq"`
	// Agent is the active agent profile ("" = the default).
	Agent string `json:"agent,omitempty"`
	// AgentNote is what the active agent was told when it took over.
	AgentNote string `json:"agent_note,omitempty"`
	// Usage and Cost are the session's totals: its own model calls plus the
	// subtrees of finished sub-agents.
	Usage messages.Usage `json:"usage"`
	Cost  float64        `json:"cost,omitempty"`
	// RoundTrips counts the same model calls as Usage.
	RoundTrips int `json:"round_trips,omitempty"`
	// Unfinished holds the sub-agents spawned and not yet finished, of any
	// turn (one spawned by a turn that has ended still owes its result and
	// usage), by child session id.
	Unfinished map[string]messages.SubAgentSpawned `json:"unfinished,omitempty"`
	// Open is the turn in progress, nil if none.
	Open *OpenTurn `json:"open,omitempty"`
	// TurnIDs maps a client turn id to its turn, so that a retried
	// submission is recognised, and to the entry that first named it, so
	// that how the turn ended can be read from there instead of from the
	// start of the journal. It holds at most MaxTurnIDs entries. In JSON
	// it is the two maps "turn_ids" (id to turn index) and "turn_seqs" (id
	// to seq), as snapshots have always stored it (see state_json.go).
	TurnIDs map[string]TurnRef `json:"-"`
	// Updated is the time of the last entry folded in.
	Updated time.Time `json:"updated"`
}

// TurnRef is what State.TurnIDs keeps of a client turn id.
type TurnRef struct {
	// Turn is the index of the turn the id names.
	Turn int
	// Seq is the sequence number of the entry that first named the id
	// (its turn's UserMessage); zero when it is not known: the id came
	// from an entry without a seq of its own, or from a snapshot written
	// before seqs were kept.
	Seq uint64
}

// OpenTurn is a turn that has started and not ended. After a crash it tells
// the session actor where the turn stopped: which calls of the last assistant
// message still lack a result (Pending), which of those were started (a
// started call may have run; re-run it only if the tool is idempotent), and
// which approvals and sub-agents are outstanding.
type OpenTurn struct {
	Turn   int    `json:"turn"`
	TurnID string `json:"turn_id,omitempty"`
	// TraceID and SpanID name the span of the turn as its UserMessage
	// journaled it; empty when the turn was not traced.
	TraceID string `json:"trace_id,omitempty"`
	SpanID  string `json:"span_id,omitempty"`
	// Started lists the turn's ToolCallStarted events in the order they were
	// journaled (call order).
	Started []messages.ToolCallStarted `json:"started,omitempty"`
	// Results holds the turn's tool results by call id.
	Results map[string]messages.ToolResult `json:"results,omitempty"`
	// Pending are the calls of the last assistant message without a result,
	// in call order.
	Pending []messages.ToolCall `json:"pending,omitempty"`
	// Approvals holds the turn's approval requests by call id.
	Approvals map[string]Approval `json:"approvals,omitempty"`
	// SubAgents holds the sub-agents spawned in the turn, by call id.
	SubAgents map[string]SubAgent `json:"subagents,omitempty"`
	// RoundTrips counts the assistant messages of the turn.
	RoundTrips int `json:"round_trips"`
	// Usage and Cost are the turn's model calls.
	Usage messages.Usage `json:"usage"`
	Cost  float64        `json:"cost,omitempty"`
	// Output is the structured answer the turn must end with (from its
	// UserMessage), nil for a plain turn.
	Output *messages.OutputSpec `json:"output,omitempty"`
	// Corrections counts the answers of the turn that were sent back to
	// the model because they did not match Output: a later UserMessage of
	// the turn, or an error result of its answer tool.
	Corrections int `json:"corrections,omitempty"`
}

// WasStarted reports whether the call was journaled as started.
func (o *OpenTurn) WasStarted(callID string) bool {
	return slices.ContainsFunc(o.Started, func(s messages.ToolCallStarted) bool { return s.CallID == callID })
}

// Decision is the state of an approval request.
type Decision string

// The approval decisions.
const (
	DecisionPending Decision = "pending"
	DecisionGranted Decision = "granted"
	DecisionDenied  Decision = "denied"
)

// Approval is an approval request and its decision.
type Approval struct {
	Tool     string   `json:"tool"`
	Reason   string   `json:"reason,omitempty"`
	Decision Decision `json:"decision"`
	By       string   `json:"by,omitempty"`
}

// SubAgent is a sub-agent spawned by a tool call; Finished is nil while it
// runs.
type SubAgent struct {
	Spawned  messages.SubAgentSpawned   `json:"spawned"`
	Finished *messages.SubAgentFinished `json:"finished,omitempty"`
}

// ValidateEvent checks an event before it is journaled: user messages have
// the user role, assistant messages the assistant role, compactions hold no
// system or developer message, and Activated is written only by
// Journal.Activate. It returns an error wrapping ErrInvalidEvent.
func ValidateEvent(ev messages.JournalEvent) error {
	switch e := ev.(type) {
	case nil:
		return fmt.Errorf("%w: nil event", ErrInvalidEvent)
	case messages.Activated:
		return fmt.Errorf("%w: activated is appended by Activate only", ErrInvalidEvent)
	case messages.UserMessage:
		if e.Message.Role != messages.RoleUser {
			return fmt.Errorf("%w: user_message with role %q (system prompts are not stored)", ErrInvalidEvent, e.Message.Role)
		}
	case messages.AssistantMessage:
		if e.Message.Role != messages.RoleAssistant {
			return fmt.Errorf("%w: assistant_message with role %q", ErrInvalidEvent, e.Message.Role)
		}
	case messages.ToolResult:
		if e.CallID == "" {
			return fmt.Errorf("%w: tool_result without call_id", ErrInvalidEvent)
		}
	case messages.Compacted:
		for i, m := range e.Messages {
			if storable(m.Role) {
				continue
			}
			return fmt.Errorf("%w: compacted message %d has role %q", ErrInvalidEvent, i, m.Role)
		}
	}
	return nil
}

// ErrInvalidEvent is returned when an event cannot be journaled.
var ErrInvalidEvent = errors.New("memory: invalid journal event")

func storable(r messages.Role) bool {
	return r == messages.RoleUser || r == messages.RoleAssistant || r == messages.RoleTool
}

// Apply folds one journal entry into the state. Entries must come in
// sequence order (ErrOutOfOrder otherwise). System and developer messages
// are skipped, never stored, and a tool result that answers no pending call
// is kept in the open turn's Results but not added to History.
func (s *State) Apply(env messages.Envelope, ev messages.JournalEvent) error {
	if ev == nil {
		return fmt.Errorf("%w: nil event at seq %d", ErrInvalidEvent, env.Seq)
	}
	if env.Seq <= s.Seq {
		return fmt.Errorf("%w: seq %d after %d", ErrOutOfOrder, env.Seq, s.Seq)
	}
	s.Seq = env.Seq
	if !env.At.IsZero() {
		s.Updated = env.At
	}
	switch e := ev.(type) {
	case messages.Activated:
		s.Activation = e.Activation
	case messages.UserMessage:
		if s.Open == nil || s.Open.Turn != e.Turn {
			s.Open = &OpenTurn{Turn: e.Turn, TurnID: e.TurnID, TraceID: e.TraceID, SpanID: e.SpanID, Output: e.Output}
		} else if s.Open.Output != nil {
			s.Open.Corrections++
		}
		s.Open.Pending = nil
		s.noteTurn(e.Turn, e.TurnID, env.Seq)
		s.push(e.Message, messages.RoleUser)
	case messages.AssistantMessage:
		o := s.open(e.Turn)
		o.RoundTrips++
		o.Usage = o.Usage.Add(e.Usage)
		o.Cost += e.Cost
		s.Usage = s.Usage.Add(e.Usage)
		s.Cost += e.Cost
		s.RoundTrips++
		o.Pending = nil
		if s.push(e.Message, messages.RoleAssistant) {
			o.Pending = slices.Clone(e.Message.ToolCalls)
		}
	case messages.ToolCallStarted:
		o := s.open(e.Turn)
		if !o.WasStarted(e.CallID) {
			o.Started = append(o.Started, e)
		}
	case messages.ToolResult:
		o := s.open(e.Turn)
		if o.Results == nil {
			o.Results = map[string]messages.ToolResult{}
		}
		o.Results[e.CallID] = e
		if e.IsError && e.Name == messages.AnswerTool && o.Output != nil && o.Output.Mode == messages.OutputAnswerTool {
			o.Corrections++
		}
		s.answer(o, e)
	case messages.TurnCompleted:
		s.noteTurn(e.Turn, e.TurnID, env.Seq)
		s.Open = nil
	case messages.TurnCancelled:
		s.noteTurn(e.Turn, e.TurnID, env.Seq)
		s.Open = nil
	case messages.Compacted:
		s.compact(e)
	case messages.ApprovalRequested:
		o := s.open(e.Turn)
		if o.Approvals == nil {
			o.Approvals = map[string]Approval{}
		}
		o.Approvals[e.CallID] = Approval{Tool: e.Tool, Reason: e.Reason, Decision: DecisionPending}
	case messages.ApprovalGranted:
		s.decide(e.CallID, DecisionGranted, e.By, "")
	case messages.ApprovalDenied:
		s.decide(e.CallID, DecisionDenied, e.By, e.Reason)
	case messages.AgentSwitched:
		s.Agent, s.AgentNote = e.To, e.Note
	case messages.SubAgentSpawned:
		if s.Unfinished == nil {
			s.Unfinished = map[string]messages.SubAgentSpawned{}
		}
		s.Unfinished[e.Child] = e
		if e.Turn < 0 {
			break // spawned outside the session's turns
		}
		o := s.open(e.Turn)
		if o.SubAgents == nil {
			o.SubAgents = map[string]SubAgent{}
		}
		o.SubAgents[e.CallID] = SubAgent{Spawned: e}
	case messages.SubAgentFinished:
		delete(s.Unfinished, e.Child)
		s.Usage = s.Usage.Add(e.Usage)
		s.Cost += e.Cost
		s.RoundTrips += e.RoundTrips
		if s.Open != nil {
			if sa, ok := s.Open.SubAgents[e.CallID]; ok {
				sa.Finished = &e
				s.Open.SubAgents[e.CallID] = sa
			}
		}
	case messages.SamplingAnswered:
		// An MCP server's sampling request, answered by the session's
		// model: its usage and cost are the turn's and the session's.
		o := s.open(e.Turn)
		o.Usage = o.Usage.Add(e.Usage)
		o.Cost += e.Cost
		s.Usage = s.Usage.Add(e.Usage)
		s.Cost += e.Cost
	case messages.ElicitationRequested, messages.ElicitationResolved:
		// An MCP server's question and its answer leave the conversation
		// as it is: the call that caused it records its own result.
	default:
		return fmt.Errorf("%w: unhandled event type %s at seq %d", ErrInvalidEvent, ev.JournalType(), env.Seq)
	}
	return nil
}

// open returns the open turn, opening turn if none is.
func (s *State) open(turn int) *OpenTurn {
	if s.Open == nil {
		s.Open = &OpenTurn{Turn: turn}
		s.noteTurn(turn, "", 0)
	}
	return s.Open
}

// noteTurn advances the next turn index past turn and remembers its client
// id, first named by the entry at seq.
func (s *State) noteTurn(turn int, turnID string, seq uint64) {
	s.Turn = max(s.Turn, turn+1)
	if turnID == "" {
		return
	}
	if _, ok := s.TurnIDs[turnID]; ok {
		return
	}
	if s.TurnIDs == nil {
		s.TurnIDs = map[string]TurnRef{}
	}
	if len(s.TurnIDs) >= MaxTurnIDs {
		oldest, oldestTurn := "", 0
		for id, t := range s.TurnIDs {
			if oldest == "" || t.Turn < oldestTurn || (t.Turn == oldestTurn && id < oldest) {
				oldest, oldestTurn = id, t.Turn
			}
		}
		delete(s.TurnIDs, oldest)
	}
	s.TurnIDs[turnID] = TurnRef{Turn: turn, Seq: seq}
}

// push appends m with the given role to History, unless the role is not
// storable. It reports whether m was stored.
func (s *State) push(m messages.Message, role messages.Role) bool {
	if m.Role != role || !storable(role) {
		return false
	}
	s.reserve()
	s.History = append(s.History, m)
	s.HistorySeq = append(s.HistorySeq, s.Seq)
	return true
}

// answer adds the tool message of r to History when r answers a pending call
// of the last assistant message, keeping the group in call order.
func (s *State) answer(o *OpenTurn, r messages.ToolResult) {
	i := slices.IndexFunc(o.Pending, func(c messages.ToolCall) bool { return c.ID == r.CallID })
	if i < 0 {
		return
	}
	o.Pending = slices.Delete(o.Pending, i, i+1)
	a := s.lastAssistant()
	if a < 0 {
		return
	}
	order := func(id string) int {
		return slices.IndexFunc(s.History[a].ToolCalls, func(c messages.ToolCall) bool { return c.ID == id })
	}
	// The tool messages after the assistant message are in call order
	// (each was placed here): a result that comes after the last of them
	// goes at the end, any other is placed by binary search. Either costs
	// one or a few searches of the calls, not one per earlier result.
	want := order(r.CallID)
	at := len(s.History)
	if at > a+1 && order(s.History[at-1].ToolCallID) > want {
		at = a + 1 + sort.Search(at-a-1, func(i int) bool { return order(s.History[a+1+i].ToolCallID) >= want })
	}
	s.reserve()
	s.History = slices.Insert(s.History, at, messages.ToolResultMessage(r.CallID, r.Content))
	s.HistorySeq = slices.Insert(s.HistorySeq, at, s.Seq)
	// Keep HistorySeq non-decreasing: the messages after the insertion point
	// reached their place with this entry.
	for j := at + 1; j < len(s.HistorySeq); j++ {
		s.HistorySeq[j] = s.Seq
	}
}

// lastAssistant returns the index of the last assistant message if only its
// tool messages follow it, else -1.
func (s *State) lastAssistant() int {
	for i := len(s.History) - 1; i >= 0; i-- {
		switch s.History[i].Role {
		case messages.RoleTool:
			continue
		case messages.RoleAssistant:
			return i
		}
		return -1
	}
	return -1
}

func (s *State) decide(callID string, d Decision, by, reason string) {
	if s.Open == nil {
		return
	}
	a, ok := s.Open.Approvals[callID]
	if !ok {
		return
	}
	a.Decision, a.By = d, by
	if reason != "" {
		a.Reason = reason
	}
	s.Open.Approvals[callID] = a
}

// compact replaces the messages produced by entries up to c.Through with
// c.Messages.
func (s *State) compact(c messages.Compacted) {
	n, _ := slices.BinarySearch(s.HistorySeq, c.Through+1)
	var (
		hist = make([]messages.Message, 0, len(c.Messages)+len(s.History)-n)
		seqs = make([]uint64, 0, cap(hist))
	)
	for _, m := range c.Messages {
		if storable(m.Role) {
			hist = append(hist, m)
			seqs = append(seqs, c.Through)
		}
	}
	s.History = append(hist, s.History[n:]...)
	s.HistorySeq = append(seqs, s.HistorySeq[n:]...)
}

// CompactedEvent returns the Compacted event that replaces the first
// c.Replaced messages of History with c.Replacement. It fails when the cut
// does not fall on an entry boundary (inside a tool-call group whose results
// arrived out of order) or when Replaced is out of range.
func (s *State) CompactedEvent(kind string, c Compaction, tokensBefore, tokensAfter int) (messages.Compacted, error) {
	if c.Replaced <= 0 || c.Replaced > len(s.History) {
		return messages.Compacted{}, fmt.Errorf("%w: replaced %d of %d messages", ErrNothingToCompact, c.Replaced, len(s.History))
	}
	through := s.HistorySeq[c.Replaced-1]
	if c.Replaced < len(s.HistorySeq) && s.HistorySeq[c.Replaced] == through {
		return messages.Compacted{}, fmt.Errorf("memory: compaction cut at message %d splits the entry at seq %d", c.Replaced, through)
	}
	return messages.Compacted{
		Kind:         kind,
		Through:      through,
		Messages:     slices.Clone(c.Replacement),
		TokensBefore: tokensBefore,
		TokensAfter:  tokensAfter,
	}, nil
}

// ViewOptions selects a view of the history.
type ViewOptions struct {
	// Window keeps only the last Window messages (the sliding window); zero
	// or negative means the full history. The window never starts with a
	// tool message cut off from its assistant message, so it may hold fewer.
	Window int
	// KeepPending leaves the calls of the turn still open (State.Open)
	// without a result, instead of answering them as interrupted: for
	// showing a history while its turn runs, never for a model request.
	KeepPending bool
}

// Messages returns the history as providers accept it: see Repair. The
// result is a new slice; the state is not modified. Call it for a model
// request only when every call of the turn has its result, or the pending
// calls are reported as interrupted.
func (s *State) Messages(opts ViewOptions) []messages.Message {
	out := repair(s.History, opts.KeepPending && s.Open != nil)
	if opts.Window > 0 && len(out) > opts.Window {
		start := len(out) - opts.Window
		for start < len(out) && out[start].Role == messages.RoleTool {
			start++
		}
		out = out[start:]
	}
	return out
}

// Repair returns a copy of msgs that a provider accepts: system and developer
// messages are dropped, a tool message that answers no call of the assistant
// message before it (or answers a call twice) is dropped, the tool messages
// of each assistant message come in call order, and a call without a result
// is answered with InterruptedResult.
func Repair(msgs []messages.Message) []messages.Message { return repair(msgs, false) }

// repair is Repair; with keepLast, the calls of the last assistant message
// that have no result are left without one.
func repair(msgs []messages.Message, keepLast bool) []messages.Message {
	out := make([]messages.Message, 0, len(msgs))
	for i := 0; i < len(msgs); {
		m := msgs[i]
		i++
		if !storable(m.Role) || m.Role == messages.RoleTool {
			continue
		}
		out = append(out, m)
		if m.Role != messages.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		start := i
		for i < len(msgs) && msgs[i].Role == messages.RoleTool {
			i++
		}
		out = appendResults(out, m.ToolCalls, msgs[start:i], keepLast && i == len(msgs))
	}
	return out
}

// appendResults appends to out the answer of each of calls from run, the
// tool messages that follow their assistant message: the first message
// that answers a call, in call order, and InterruptedResult for a call
// without one (unless last, for the calls of the history's last message).
// A run that answers every call once and in order, as the journal keeps
// it, is appended as it is.
func appendResults(out []messages.Message, calls []messages.ToolCall, run []messages.Message, last bool) []messages.Message {
	if len(run) == len(calls) {
		inOrder := true
		for k, c := range calls {
			if run[k].ToolCallID != c.ID {
				inOrder = false
				break
			}
		}
		if inOrder {
			return append(out, run...)
		}
	}
	first := make(map[string]int, len(run))
	for k, r := range run {
		if _, dup := first[r.ToolCallID]; !dup {
			first[r.ToolCallID] = k
		}
	}
	for _, c := range calls {
		if k, ok := first[c.ID]; ok {
			out = append(out, run[k])
		} else if !last {
			out = append(out, messages.ToolResultMessage(c.ID, InterruptedResult))
		}
	}
	return out
}
