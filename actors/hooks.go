package actors

// This file holds Hooks: the callbacks that observe and steer turns.

import (
	"context"
	"fmt"
	"slices"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// HookEvent is a point of a turn where hooks run.
type HookEvent int

// The hook events.
const (
	// PreRequest runs before every model call, retries included. A hook
	// that blocks fails the turn; its reason says that a hook blocked the
	// model call, and why.
	PreRequest HookEvent = iota
	// PostRequest runs after every successful model call, before the reply
	// is journaled; HookContext.Response is set.
	PostRequest
	// OnRetry runs before a model call is retried; Err and Attempt are set.
	OnRetry
	// OnError runs when a model call fails for good; Err is set.
	OnError
	// OnTurnStart runs when a turn starts, after its user message is
	// journaled.
	OnTurnStart
	// OnTurnEnd runs when a turn ends, however it ends; Outcome is set.
	OnTurnEnd
	// PreToolUse runs before each tool call, in call order. A hook that
	// blocks turns the call into an error result; a hook that returns
	// Arguments replaces the call's arguments.
	PreToolUse
	// PostToolUse runs after each tool call with its Result.
	PostToolUse
	// OnCompact runs after the history was compacted; Compaction is set.
	OnCompact
)

var hookEventNames = [...]string{"pre_request", "post_request", "on_retry", "on_error", "on_turn_start", "on_turn_end", "pre_tool_use", "post_tool_use", "on_compact"}

// String returns the event's snake-case name.
func (e HookEvent) String() string {
	if e >= 0 && int(e) < len(hookEventNames) {
		return hookEventNames[e]
	}
	return fmt.Sprintf("HookEvent(%d)", int(e))
}

// HookContext tells a hook where it runs. Fields that do not apply to the
// event are zero. A hook must not keep the pointers it is given.
type HookContext struct {
	Event   HookEvent
	Session string
	Turn    int
	Agent   string
	// Request is the model request (PreRequest, PostRequest).
	Request *messages.Request
	// Response is the model reply (PostRequest).
	Response *messages.Response
	// Err is the model call's error (OnRetry, OnError).
	Err error
	// Attempt is the 1-based number of the retry about to happen (OnRetry).
	Attempt int
	// Call is the tool call (PreToolUse, PostToolUse).
	Call *messages.ToolCall
	// Result is the tool call's result (PostToolUse).
	Result *toolsys.Result
	// Outcome is how the turn ended (OnTurnEnd).
	Outcome messages.TurnOutcome
	// Compaction describes the compaction (OnCompact).
	Compaction *messages.ContextCompacted
}

// HookResult is a hook's answer. Only PreRequest and PreToolUse hooks can
// block, and only PreToolUse hooks can rewrite arguments; other events
// ignore the result.
type HookResult struct {
	// Block stops the model call or the tool call.
	Block bool
	// Reason says why (shown to the caller or the model).
	Reason string
	// Arguments, when not empty, replaces the tool call's arguments
	// (PreToolUse).
	Arguments string
}

// Hook is a callback run at a point of a turn. The hooks of one session
// never run concurrently, but hooks of different sessions do, so a Hook
// shared by sessions must be safe for concurrent use. A hook should return
// quickly: it runs on the session's critical path.
type Hook interface {
	Run(ctx context.Context, hc *HookContext) HookResult
}

// HookFunc adapts a function to Hook.
type HookFunc func(ctx context.Context, hc *HookContext) HookResult

// Run calls f.
func (f HookFunc) Run(ctx context.Context, hc *HookContext) HookResult { return f(ctx, hc) }

type registeredHook struct {
	event HookEvent
	hook  Hook
}

// Hooks is an ordered list of hooks. The zero value is empty and ready to
// use; register every hook before passing the Hooks to New.
type Hooks struct {
	list []registeredHook
}

// Register appends hook for event. Hooks of one event run in registration
// order, each one to completion, and all of them run (a block does not
// skip the hooks after it).
func (h *Hooks) Register(event HookEvent, hook Hook) {
	h.list = append(h.list, registeredHook{event, hook})
}

// clone returns a copy that later Register calls on h do not affect.
func (h Hooks) clone() Hooks { return Hooks{list: slices.Clone(h.list)} }

// has reports whether a hook is registered for event.
func (h Hooks) has(event HookEvent) bool {
	for _, r := range h.list {
		if r.event == event {
			return true
		}
	}
	return false
}

// run runs the hooks of hc.Event and returns their results in order. A
// panicking hook is logged and counts as an empty result. The hooks share
// one copy of hc, made only when there is a hook to run: a caller whose
// HookContext points at its own variables checks has first, so that they
// stay off the heap when no hook runs.
func (h Hooks) run(ctx context.Context, logger zerolog.Logger, hc HookContext) []HookResult {
	var out []HookResult
	var shared *HookContext
	for _, r := range h.list {
		if r.event != hc.Event {
			continue
		}
		if shared == nil {
			shared = new(HookContext)
			*shared = hc
		}
		out = append(out, runHook(ctx, logger, r.hook, shared))
	}
	return out
}

func runHook(ctx context.Context, logger zerolog.Logger, hook Hook, hc *HookContext) (res HookResult) {
	defer func() {
		if r := recover(); r != nil {
			logger.Error().Str("hook", hc.Event.String()).Interface("panic", r).Msg("hook panicked")
			res = HookResult{}
		}
	}()
	return hook.Run(ctx, hc)
}

// blocked returns the first blocking result's reason, or def when a
// blocking result gives none; ok is false when nothing blocked.
func blocked(results []HookResult, def string) (reason string, ok bool) {
	for _, r := range results {
		if r.Block {
			if r.Reason == "" {
				return def, true
			}
			return r.Reason, true
		}
	}
	return "", false
}

// blockedError says that a PreRequest hook blocked a model call.
type blockedError struct{ reason string }

func (e *blockedError) Error() string { return "actors: blocked by hook: " + e.reason }
