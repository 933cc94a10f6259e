package actors

// This file holds the Session handle: what a caller holds of a session.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// Session is a handle on one session of a Runtime. It is cheap, safe for
// concurrent use, and stays valid across the session's passivation and
// restarts: each call reaches the session's current actor, activating it
// when needed.
type Session struct {
	rt *Runtime
	id string
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// SubmitOption configures one submission.
type SubmitOption func(*submitOptions)

type submitOptions struct {
	turnID    string
	params    RequestParams
	hasParams bool
	// output is the structured answer the turn must end with.
	output        *outputOptions
	outputMode    messages.OutputMode
	outputRetries *int
}

// WithTurnID sets the client's id of the submission. A submission whose id
// the session has already journaled is not run again: it follows the turn
// in progress, or reports how that turn ended. Empty means a fresh id.
func WithTurnID(id string) SubmitOption {
	return func(o *submitOptions) { o.turnID = id }
}

// ToolCallResult summarises one tool call of a turn.
type ToolCallResult struct {
	CallID   string        `json:"call_id"`
	Name     string        `json:"name"`
	IsError  bool          `json:"is_error,omitempty"`
	Content  string        `json:"content,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// TurnResult is how a turn ended.
type TurnResult struct {
	Session      string                `json:"session"`
	Turn         int                   `json:"turn"`
	TurnID       string                `json:"turn_id,omitempty"`
	Outcome      messages.TurnOutcome  `json:"outcome"`
	FinishReason messages.FinishReason `json:"finish_reason,omitempty"`
	// Text is the final assistant text.
	Text string `json:"text,omitempty"`
	// Reason explains an outcome other than completed.
	Reason string `json:"reason,omitempty"`
	// Usage and Cost are those of the turn's own model calls, the
	// session's: not those of the sub-agents it spawned, nor of
	// compaction summaries.
	Usage messages.Usage `json:"usage"`
	Cost  float64        `json:"cost,omitempty"`
	// SubtreeUsage and SubtreeCost add to Usage and Cost those of the
	// sub-agents the turn spawned that reported before it ended, each
	// with its own sub-agents (their whole subtree). A cancelled turn
	// may end before its sub-agents have stopped; Session.Usage counts
	// them once they have.
	SubtreeUsage messages.Usage `json:"subtree_usage"`
	SubtreeCost  float64        `json:"subtree_cost,omitempty"`
	RoundTrips   int            `json:"round_trips"`
	// ToolCalls are the turn's tool calls in the order they finished, as
	// far as the stream delivered them.
	ToolCalls []ToolCallResult `json:"tool_calls,omitempty"`
	// Output is the turn's structured answer as compact JSON, checked
	// against the schema the submission gave (WithOutputSchema, SubmitAs).
	Output json.RawMessage `json:"output,omitempty"`
	// OutputFailure says why a turn that had to end with a structured
	// answer failed without one.
	OutputFailure *messages.OutputFailure `json:"output_failure,omitempty"`
}

// Stream submits input (a user message) and yields the events of its turn
// in order: TurnStarted, then TextDelta, ToolStarted, ToolFinished,
// UsageReported, ContextCompacted and ErrorEvent as they happen, and
// TurnEnded last. The user message is journaled before TurnStarted is
// published, so a TurnStarted acknowledges it durably.
//
// A slow consumer never blocks the session: each stream has a bounded
// buffer (Config.EventBuffer). When it is full, text deltas and tool
// progress reports are dropped (TurnEnded carries the complete text),
// TurnEnded is always delivered, and any other event ends the stream with
// ErrSlowSubscriber while the turn goes on.
//
// If a turn is already running, Limits.MidTurn decides: the input waits
// for its turn (queue), cancels the running turn (interrupt), or the
// stream ends at once with ErrSessionBusy (reject). Breaking out of the
// loop or cancelling ctx stops the stream, not the turn; use Cancel to
// stop the turn.
func (s *Session) Stream(ctx context.Context, input messages.Message, opts ...SubmitOption) iter.Seq2[messages.Event, error] {
	return s.events(ctx, input, false, opts)
}

// events is Stream; outcome narrows the events to what Submit reads (see
// subscriber), which spares the session publishing the others.
func (s *Session) events(ctx context.Context, input messages.Message, outcome bool, opts []SubmitOption) iter.Seq2[messages.Event, error] {
	var o submitOptions
	for _, opt := range opts {
		opt(&o)
	}
	return func(yield func(messages.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		if o.hasParams {
			if err := o.params.Validate(); err != nil {
				yield(nil, fmt.Errorf("actors: WithParams: %w", err))
				return
			}
		}
		output, err := o.resolveOutput()
		if err != nil {
			yield(nil, fmt.Errorf("actors: %w", err))
			return
		}
		if input.Role == "" {
			input.Role = messages.RoleUser
		}
		turnID := o.turnID
		if turnID == "" {
			turnID = s.rt.ids.NewID()
		}
		sub := newSubscriber(turnID, s.rt.cfg.EventBuffer)
		sub.outcome = outcome
		ref, err := s.rt.post(s.id, &submitCmd{turnID: turnID, msg: input, sub: sub, params: o.params, output: output})
		if err != nil {
			yield(nil, err)
			return
		}
		for ev, err := range sub.events(ctx, ref) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Submit runs input as a turn and returns how it ended. A turn that failed
// or was cancelled returns its result together with a *TurnError; a turn
// stopped by a limit returns its result with Outcome messages.OutcomeLimit
// and no error. See Stream for the mid-turn policy and what ctx does.
// Submit follows only the tool calls, the sub-agents' ends and the end of
// the turn, so a turn that only Submit follows does not forward the pieces
// of the replies the model streams, nor publish the events Submit would
// ignore.
func (s *Session) Submit(ctx context.Context, input messages.Message, opts ...SubmitOption) (*TurnResult, error) {
	c := turnCollector{res: &TurnResult{Session: s.id}}
	for ev, err := range s.events(ctx, input, true, opts) {
		if err != nil {
			return nil, err
		}
		if end, err := c.add(ev); end {
			return c.res, err
		}
	}
	return nil, ErrSlowSubscriber
}

// turnCollector builds a TurnResult from a turn's events.
type turnCollector struct{ res *TurnResult }

// add takes one event into the result. At TurnEnded it reports the end,
// with a *TurnError for a failed or cancelled turn.
func (c *turnCollector) add(ev messages.Event) (end bool, err error) {
	res := c.res
	switch e := ev.(type) {
	case messages.TurnStarted:
		res.Turn, res.TurnID = e.Turn, e.TurnID
	case messages.ToolFinished:
		res.ToolCalls = append(res.ToolCalls, ToolCallResult{CallID: e.CallID, Name: e.Name, IsError: e.IsError, Content: e.Content, Duration: e.Duration})
	case messages.SubAgentEnded:
		res.SubtreeUsage = res.SubtreeUsage.Add(e.Usage)
		res.SubtreeCost += e.Cost
	case messages.TurnEnded:
		res.Turn, res.TurnID = e.Turn, e.TurnID
		res.Outcome, res.FinishReason, res.Text, res.Reason = e.Outcome, e.FinishReason, e.Text, e.Reason
		res.Usage, res.Cost, res.RoundTrips = e.Usage, e.Cost, e.RoundTrips
		res.SubtreeUsage, res.SubtreeCost = res.SubtreeUsage.Add(e.Usage), res.SubtreeCost+e.Cost
		res.Output, res.OutputFailure = e.Output, e.OutputFailure
		if e.Outcome == messages.OutcomeFailed || e.Outcome == messages.OutcomeCancelled {
			return true, &TurnError{Session: res.Session, Turn: e.Turn, Outcome: e.Outcome, Reason: e.Reason}
		}
		return true, nil
	}
	return false, nil
}

// Watch yields every event the session publishes, of every turn and
// agent switch, until ctx is done or the session stops. Its buffer behaves
// as Stream's, except that TurnEnded does not end it. A watched session is
// not passivated.
func (s *Session) Watch(ctx context.Context) iter.Seq2[messages.Event, error] {
	return func(yield func(messages.Event, error) bool) {
		sub := newSubscriber("", s.rt.cfg.EventBuffer)
		sub.all = true
		ref, err := s.rt.post(s.id, &watchCmd{sub: sub})
		if err != nil {
			yield(nil, err)
			return
		}
		for ev, err := range sub.events(ctx, ref) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Cancel cancels the running turn: its model call and tool calls see their
// contexts cancelled (bash process groups are killed), TurnCancelled is
// journaled, and the turn's stream ends with OutcomeCancelled. The turn's
// sub-agents are cancelled with it, and so are the sub-agents the session
// runs outside its turns (a TaskAgent's plan steps). It reports whether a
// turn or such a sub-agent was running. Queued submissions still run.
func (s *Session) Cancel(ctx context.Context) (bool, error) {
	reply := make(chan bool, 1)
	return request(ctx, s, func() command { return &cancelCmd{reason: "cancelled by the caller", reply: reply} }, reply)
}

// Status returns a snapshot of the session.
func (s *Session) Status(ctx context.Context) (Status, error) { return s.status(ctx) }

func (s *Session) status(ctx context.Context) (Status, error) {
	reply := make(chan Status, 1)
	return request(ctx, s, func() command { return &statusCmd{reply: reply} }, reply)
}

// SwitchAgent makes the named profile the session's agent from its next
// turn on. The switch is journaled and the new agent gets a short note in
// its prompt. It fails with ErrUnknownAgent for an unknown name and with
// ErrSessionBusy while a turn runs.
func (s *Session) SwitchAgent(ctx context.Context, name string) error {
	reply := make(chan error, 1)
	err, rerr := request(ctx, s, func() command { return &switchAgentCmd{name: name, reply: reply} }, reply)
	if rerr != nil {
		return rerr
	}
	return err
}

// Approvals returns the tool calls of the session waiting for approval,
// oldest first. Only an active session can have any.
func (s *Session) Approvals(ctx context.Context) ([]PendingApproval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	reply := make(chan []PendingApproval, 1)
	ref := s.rt.postLive(s.id, &approvalsCmd{reply: reply})
	if ref == nil {
		return []PendingApproval{}, nil
	}
	select {
	case ps := <-reply:
		return ps, nil
	case <-ref.done:
		return []PendingApproval{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Usage reads the session's journal and reports its usage: its own model
// calls, each finished sub-agent's subtree in the order they finished, and
// the sum of both. A sub-agent that was cancelled, failed or stopped by its
// budget counts with what its subtree spent until then: when the session
// is active, Usage first waits for the sub-agents of its ended turns (a
// cancelled turn ends before they have stopped) to report.
func (s *Session) Usage(ctx context.Context) (UsageReport, error) {
	rep := UsageReport{Session: s.id}
	if err := s.settle(ctx); err != nil {
		return rep, err
	}
	spawned := map[string]messages.SubAgentSpawned{}
	for entry, err := range s.rt.journal.Read(ctx, s.id, 1) {
		if errors.Is(err, memory.ErrNotFound) {
			break
		}
		if err != nil {
			return rep, fmt.Errorf("actors: usage of %s: %w", s.id, err)
		}
		switch ev := entry.Event.(type) {
		case messages.AssistantMessage:
			rep.Own = rep.Own.Add(ev.Usage)
			rep.OwnCost += ev.Cost
		case messages.SamplingAnswered:
			rep.Own = rep.Own.Add(ev.Usage)
			rep.OwnCost += ev.Cost
		case messages.SubAgentSpawned:
			spawned[ev.Child] = ev
		case messages.SubAgentFinished:
			sp := spawned[ev.Child]
			rep.SubAgents = append(rep.SubAgents, SubAgentUsage{Turn: sp.Turn, CallID: ev.CallID, Child: ev.Child, Agent: sp.Agent,
				Outcome: ev.Outcome, Usage: ev.Usage, Cost: ev.Cost, RoundTrips: ev.RoundTrips})
		}
	}
	rep.Total, rep.TotalCost = rep.Own, rep.OwnCost
	for _, sa := range rep.SubAgents {
		rep.Total = rep.Total.Add(sa.Usage)
		rep.TotalCost += sa.Cost
	}
	return rep, nil
}

// settle waits, when the session is active, until the sub-agents of its
// ended turns have reported their results (see settleCmd).
func (s *Session) settle(ctx context.Context) error {
	reply := make(chan Status, 1)
	ref := s.rt.postLive(s.id, &settleCmd{reply: reply})
	if ref == nil {
		return nil
	}
	select {
	case <-reply:
	case <-ref.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// request posts a command to the session's actor and waits for its reply.
// If the actor stops for good before answering, it returns why.
func request[T any](ctx context.Context, s *Session, msg func() command, reply chan T) (T, error) {
	var zero T
	for {
		ref, err := s.rt.post(s.id, msg())
		if err != nil {
			return zero, err
		}
		select {
		case v := <-reply:
			return v, nil
		case <-ref.done:
			select {
			case v := <-reply:
				return v, nil
			default:
			}
			if ref.err != nil {
				return zero, ref.err
			}
			// The actor stopped without a reason before it saw the
			// command: the next activation answers.
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}
