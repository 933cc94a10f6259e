package actors

// This file holds Config, the configuration of a Runtime, with Limits,
// Compaction and MidTurnPolicy, and the interfaces a Runtime is given:
// Tools, SessionMemory, Knowledge and IDs.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/schedule"
	"github.com/agcore/agcore/supervisor"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// Tools is what the runtime needs of a tool registry; *toolsys.Registry
// implements it. Implementations must be safe for concurrent use.
type Tools interface {
	// Call runs the named tool with raw JSON arguments. A failure the model
	// should read is a Result with IsError (an unknown tool included); an
	// error is a fault of the runtime.
	Call(ctx context.Context, name string, raw json.RawMessage, tc *toolsys.Context) (toolsys.Result, error)
	// Definitions describes every tool to the model.
	Definitions() []messages.ToolDefinition
	// Get returns the named tool, to read its permission and idempotency.
	Get(name string) (toolsys.Tool, bool)
}

// SessionMemory renders a session's key-value memory for the system
// prompt; *memory.SessionMemory implements it.
type SessionMemory interface {
	// Snapshot returns the block to add to the prompt, "" for none.
	Snapshot(ctx context.Context, session string) (string, error)
}

// Knowledge answers retrieval queries for the prompt and the retrieve
// tool. Implementations must be safe for concurrent use.
type Knowledge interface {
	// Query returns at most limit passages matching query, best first.
	Query(ctx context.Context, query string, limit int) ([]Passage, error)
}

// Passage is one piece of retrieved knowledge.
type Passage struct {
	ID    string  `json:"id,omitempty"`
	Title string  `json:"title"`
	Text  string  `json:"text"`
	Score float64 `json:"score,omitempty"`
}

// IDs generates identifiers (turn ids). Implementations must be safe for
// concurrent use.
type IDs interface {
	NewID() string
}

// IDFunc adapts a function to IDs.
type IDFunc func() string

// NewID calls f.
func (f IDFunc) NewID() string { return f() }

var _ Tools = (*toolsys.Registry)(nil)

type randomIDs struct{}

func (randomIDs) NewID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// MidTurnPolicy says what happens to a user message that arrives while a
// turn is running.
type MidTurnPolicy int

// The mid-turn policies.
const (
	// MidTurnQueue runs the message as the next turn, after the running one
	// ends. It is the default.
	MidTurnQueue MidTurnPolicy = iota
	// MidTurnInterrupt cancels the running turn and runs the message at once.
	MidTurnInterrupt
	// MidTurnReject refuses the message with ErrSessionBusy.
	MidTurnReject
)

// String returns "queue", "interrupt" or "reject".
func (p MidTurnPolicy) String() string {
	switch p {
	case MidTurnQueue:
		return "queue"
	case MidTurnInterrupt:
		return "interrupt"
	case MidTurnReject:
		return "reject"
	}
	return fmt.Sprintf("MidTurnPolicy(%d)", int(p))
}

// Limits bound what a session may spend. The zero value is the default.
type Limits struct {
	// MaxRoundTrips is the number of model calls one turn may make. Zero
	// means 10. A turn that needs more ends with messages.OutcomeLimit.
	MaxRoundTrips int
	// MaxTokens is the session's total token budget. Zero means unlimited.
	MaxTokens int64
	// MaxCost is the session's total cost budget, in the price table's
	// currency. Zero means unlimited.
	MaxCost float64
	// ToolTimeout is the deadline of one tool call. It does not run while
	// the call waits for approval: it starts, whole, once the call is
	// approved. Zero means 60s; negative means none.
	ToolTimeout time.Duration
	// MaxParallelTools is how many calls of one reply run at once. Zero
	// means 8.
	MaxParallelTools int
	// MidTurn is the policy for a user message that arrives mid-turn.
	MidTurn MidTurnPolicy
}

func (l Limits) withDefaults() Limits {
	if l.MaxRoundTrips <= 0 {
		l.MaxRoundTrips = 10
	}
	if l.ToolTimeout == 0 {
		l.ToolTimeout = 60 * time.Second
	}
	if l.MaxParallelTools <= 0 {
		l.MaxParallelTools = 8
	}
	return l
}

// merge returns l with the non-zero fields of o.
func (l Limits) merge(o Limits) Limits {
	if o.MaxRoundTrips != 0 {
		l.MaxRoundTrips = o.MaxRoundTrips
	}
	if o.MaxTokens != 0 {
		l.MaxTokens = o.MaxTokens
	}
	if o.MaxCost != 0 {
		l.MaxCost = o.MaxCost
	}
	if o.ToolTimeout != 0 {
		l.ToolTimeout = o.ToolTimeout
	}
	if o.MaxParallelTools != 0 {
		l.MaxParallelTools = o.MaxParallelTools
	}
	return l
}

// Compaction configures the compactor service. The zero value compacts a
// history past 95,000 estimated tokens by pruning old tool results, and
// summarises only when a summariser model is set. The threshold is checked
// when a turn ends and after each tool round; a context-length error from
// the provider compacts at once and retries the model call, once per turn.
type Compaction struct {
	// Config sizes the context window and the threshold.
	Config memory.CompactionConfig
	// SummaryModel is the "provider/model" that writes summaries (possibly
	// a cheaper model). Empty means micro-compaction only.
	SummaryModel string
	// SummaryPrompt is the instruction given to the summariser. Empty
	// means a built-in instruction.
	SummaryPrompt string
	// Disabled turns automatic compaction off (a context-length error still
	// fails the turn).
	Disabled bool
}

// Config configures a Runtime. Providers (or Provider), and DataDir (or
// Store, or Journal) are required; every other field has a documented
// default. New copies the Config; the caller may reuse it.
type Config struct {
	// DataDir is the directory of the Badger store, created if missing.
	// Exactly one of DataDir, Store and Journal must be set.
	DataDir string
	// Store is an open store the runtime uses but does not close.
	Store *memory.Store
	// Journal is the session journal, used as is and not closed. The
	// runtime then keeps no session memory unless SessionMemory is set.
	Journal memory.Journal
	// Durability is the journal's durability when the runtime opens it
	// (from DataDir or Store). Zero means memory.DurabilitySync.
	Durability memory.Durability

	// Providers routes "provider/model" references. Either Providers or
	// Provider must be set.
	Providers *providers.Registry
	// Provider is a single provider, used when Providers is nil; Model
	// names its model.
	Provider providers.Provider
	// Model is the default model reference ("provider/model", or a model
	// of the default provider). Agents may name their own.
	Model string
	// Prices prices the usage of each model. Nil means every call is free.
	Prices providers.PriceTable
	// Stream says whether model calls stream their replies. Zero
	// (StreamDefault) streams; StreamOff asks for complete replies (one
	// text delta per reply). An agent's AgentProfile.Stream overrides it.
	// A provider that cannot stream at all is better wrapped with
	// providers.ChatOnly, which holds whatever the agent says.
	Stream StreamMode
	// StructuredOutput says, per model reference ("provider/model") or per
	// provider name ("local"), how a turn's structured answer (SubmitAs,
	// WithOutputSchema) is asked for: messages.OutputJSONSchema sends
	// response_format json_schema, messages.OutputAnswerTool offers an
	// answer tool, for models that cannot do JSON-schema output. The model
	// reference wins over the provider name. Nil, or no entry, means
	// OutputJSONSchema. AgentProfile.Output overrides it.
	StructuredOutput map[string]messages.OutputMode
	// Retry is the retry policy of model calls, and the runtime is their
	// only retry layer: a provider that retries on its own (a
	// providers.Retrier, such as openai.Provider or what
	// providers.WithRetry returns) has that layer taken off for model
	// calls, so its own policy does not apply there. A failure the model
	// decider calls retryable (providers.IsRetryable, or Retry.Retryable
	// when set) is retried, with the PreRequest hooks before every attempt
	// and the OnRetry hooks (after Retry.OnRetry) before every wait. The
	// zero value is providers' default: 3 attempts in all, 1 s doubling to
	// 30 s with 25 % jitter, a server's Retry-After waited up to 30 s,
	// 250 ms after an unreachable endpoint, and no wait that would pass
	// the turn's deadline. Nil Sleep and Rand mean the runtime's Clock and
	// Rand. Summaries for compaction (Compaction.SummaryModel) are single
	// Chat calls retried only by the provider's own policy.
	Retry providers.RetryPolicy

	// Tools are the tools agents may call. Nil means none.
	Tools Tools
	// Approver decides the tool calls that the tools' permission pipeline
	// sends for approval: a human behind a front end, or a policy. The
	// runtime puts its own approver in front of it (toolsys.WithApprover):
	// each request is journaled (ApprovalRequested) and published
	// (messages.ApprovalPending), Approver and Runtime.Approve race to
	// answer, and the answer is journaled (ApprovalGranted or
	// ApprovalDenied) before the call goes on. The pipeline's
	// ApprovalTimeout bounds the wait (an unanswered approval expires);
	// the call's ToolTimeout starts once it is approved. Use
	// ManualApprover when only Runtime.Approve answers. Nil means the
	// pipeline's own PermissionConfig.Approver decides, unrecorded (or,
	// without one, such calls are denied).
	Approver toolsys.Approver
	// Workspace confines the file tools. Nil means they may not touch files.
	Workspace *toolsys.Workspace
	// MCPServers are MCP servers whose tools agents may call, as
	// mcp__<server>__<tool>. The runtime keeps one supervised connection
	// per server, shared by every session, and registers the tools in
	// Tools while the server is up (removing them at Shutdown). Tools must
	// then be a *toolsys.Registry, so that remote tools pass its permission
	// checks, or nil: the runtime then keeps a registry of its own, with the
	// registry's fail-closed default permissions (a remote tool above
	// read-only needs Approver). Nil means no servers. See Runtime.MCP.
	MCPServers []mcp.ServerConfig

	// Agents are the agent profiles. Empty means one profile named
	// "default" with no prompt of its own and every tool.
	Agents []AgentProfile
	// DefaultAgent is the profile of a new session. Empty means the first
	// of Agents.
	DefaultAgent string
	// BasePrompt is the first layer of every system prompt. It is a
	// text/template with the same data as agent prompts.
	BasePrompt string
	// EnvironmentPrompt adds an <environment> layer to every system prompt,
	// after the agent's: the session id, the agent, the date and the
	// workspace. The zero value leaves it out, so that a request carries
	// only the conversation and the prompts configured; a prompt template
	// can name the same values ({{.Session}}, {{.Agent}}, {{.Date}},
	// {{.Workspace}}).
	EnvironmentPrompt bool
	// PromptVars are template variables shared by every prompt.
	PromptVars map[string]any
	// Skills lists the skills agents may load, as a layer of the system
	// prompt. The zero value adds none.
	Skills SkillsLayer

	// Prompts is a registry of prompt templates and partials that
	// BasePrompt and the agents' prompts may use ({{template "name" .}}).
	// New takes a copy: templates added later do not reach the runtime. A
	// prompt that names a template the registry lacks is refused by New.
	// Nil means none.
	Prompts *Prompts

	// SubAgents enables the spawn_agent and transfer_to_agent tools and
	// bounds sub-agents. The zero value enables neither tool.
	SubAgents SubAgents

	// Hooks observe and steer turns; they run in registration order.
	Hooks Hooks
	// Limits bound turns and sessions.
	Limits Limits
	// Compaction configures the compactor service.
	Compaction Compaction
	// SessionMemory feeds the session-memory layer of the prompt. Nil means
	// the store's session memory, or none with a bare Journal.
	SessionMemory SessionMemory
	// Knowledge feeds the retrieved-knowledge layer of the prompt and the
	// retrieve tool of agents that enable it. Nil means none.
	Knowledge Knowledge

	// Schedules are the schedules the runtime fires: when set, the runtime
	// runs a scheduler service that submits each schedule's prompt to its
	// session at its fire times, timed by Clock, journaling every fire in
	// the store before its run starts (see package schedule). It must be
	// kept in the runtime's store. Nil means no scheduler: nothing fires.
	Schedules *schedule.Store

	// RestartBudget limits the restarts of a failing session. The zero
	// value allows 3 within a minute.
	RestartBudget supervisor.BudgetOptions
	// IdleTimeout passivates a session that has been idle this long: no
	// turn, queued submission, compaction or sub-agent running, and no
	// message handled (a passivated session keeps no actor and no history
	// in memory; its next use activates it again from the journal). The
	// session goes between one and two timeouts after its last message,
	// timed by Clock. Zero means 10 minutes; negative means never.
	IdleTimeout time.Duration
	// EventBuffer is the buffer of each event subscriber. Zero means 256.
	// See Session.Stream for what happens when it is full.
	EventBuffer int
	// Node names this process in journal activations. Empty means "local".
	Node string

	// TracerProvider receives the runtime's spans, named and attributed as
	// the OpenTelemetry GenAI conventions say (see package telemetry):
	// invoke_agent per turn, chat per model call, execute_tool per tool
	// call (a sub-agent's turn under the call that spawned it), and the
	// waits for approvals and compactions. Nil means no spans, at close
	// to no cost. The runtime never sets or reads a global provider.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the runtime's metrics (telemetry.MetricNames):
	// turns, tokens, cost, model and tool calls and latencies, active
	// sessions and restarts. Nil means none.
	MeterProvider metric.MeterProvider
	// TraceContent records prompts, completions, tool arguments and tool
	// results on the spans, masked by Redactor. False (the default)
	// records names, ids, sizes and outcomes only.
	TraceContent bool

	// Logger receives the runtime's logs, protoactor's included, masked by
	// Redactor. The zero Logger discards them.
	Logger zerolog.Logger
	// Redactor masks credentials in everything the runtime lets out: the
	// events it publishes (error reasons fully, model and tool text by
	// redact.Redactor.Content), the journal, and its logs. Nil means the
	// Redactor of Tools when it has one (a *toolsys.Registry does: it knows
	// the secrets substituted into calls), else a new one.
	Redactor *redact.Redactor
	// Clock tells the time and arms timers. Nil means the system clock.
	Clock supervisor.Clock
	// IDs generates turn ids. Nil means random ids.
	IDs IDs
	// Rand draws jitter. Nil means a source seeded with 1.
	Rand supervisor.Rand
}

// Configuration errors.
var (
	// ErrConfig is wrapped by every error New returns for a bad Config.
	ErrConfig = errors.New("actors: invalid config")
)

func configErr(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrConfig, field, fmt.Sprintf(format, args...))
}
