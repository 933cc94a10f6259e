// Package actors is the agcore runtime: supervised sessions of LLM agents
// on protoactor-go, each one an event-sourced journal.
//
// Embed a runtime and stream one turn:
//
//	model := scripted.MustNew(scripted.Script{Rules: []scripted.Rule{
//		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "Hello!"}},
//	}}, scripted.Options{}) // or openai.New(...) for a real endpoint
//	rt, err := actors.New(actors.Config{DataDir: "agcore-data", Provider: model, Tools: registry})
//	if err != nil {
//		return err
//	}
//	defer rt.Shutdown(ctx)
//	sess, err := rt.Open(ctx, "support-42")
//	if err != nil {
//		return err
//	}
//	for ev, err := range sess.Stream(ctx, messages.UserText("hi")) {
//		if err != nil {
//			return err
//		}
//		if d, ok := ev.(messages.TextDelta); ok {
//			fmt.Print(d.Text)
//		}
//	}
//
// Session.Submit runs a turn and returns its *TurnResult instead of
// streaming it. NewInMemory starts a runtime that keeps its journals in
// process memory (memory.MemoryJournal) and opens no store, for tests and
// examples. No protoactor type appears in this API.
//
// # Sessions
//
// Each session is an actor named sessions/<id>, activated by Open or by the
// first command that reaches it, and passivated after Config.IdleTimeout:
// its actor stops and nothing of it stays in memory until its next use
// activates it again from its journal. The actor owns everything about its
// session; a Session, the Runtime and other sessions hold only its id and
// its actor's address, and reach it by message.
//
// A turn is a sequence of messages: the user message is journaled (which
// acknowledges it) and TurnStarted published; the session starts the model
// call, which streams the reply back to it; the reply is journaled; each
// tool call is journaled as started and runs with its own deadline, all
// calls of one reply in parallel up to Limits.MaxParallelTools; results are
// journaled as they arrive and given to the model in call order; the loop
// ends when the model stops, a limit is hit, or the turn is cancelled.
// Whatever the session learns from one message (a reply, a tool result) it
// journals in one append before it publishes the events or starts the work
// that follow from it. Model and tool calls run off the session's mailbox,
// on long-lived workers of the runtime, and report back by message: the
// mailbox never waits on a model or a tool, so Cancel, Status and a user
// message that arrives mid-turn (Limits.MidTurn: queue, interrupt or
// reject) are handled at once. A call starts on the goroutine that ran the
// mailbox once that run ends, and the mailbox runs its report on the
// call's goroutine when it is idle, so that a turn moves between goroutines
// only where it must. Session.Cancel cancels the contexts of the
// turn's model call and tool calls and journals the cancellation.
//
// # Supervision
//
// The session supervises the calls it starts: a tool that fails, panics
// or overruns its deadline becomes an error result the model reads ("tool
// X panicked: ...", "tool X timed out after 30s") and the turn goes on; a
// tool that ignores its context keeps its worker busy until it returns,
// without holding up the session (Runtime.Delete and Runtime.Shutdown wait
// for it, as long as their context allows). A session actor that panics (a
// failed journal append, a bug) is restarted by its supervisor and rebuilds
// its state from the journal; submissions not yet journaled are taken up
// again. When its restart budget (Config.RestartBudget) runs out the
// session stops and its callers get a *SessionStoppedError with the
// reason; a session fenced off by a newer activation stops at once. Its
// sub-agents' actors are supervised the same way. The strategies and
// deciders live in package supervisor.
//
// # Durability
//
// The journal is the source of truth. On activation a session loads its
// snapshot and the entries after it. A turn that was in progress resumes:
// tool calls with a recorded result are not run again, a call that started
// without a result runs again only if its tool is idempotent or read-only
// (otherwise the model reads that it was interrupted), and the turn
// completes. A submission carries a turn id (WithTurnID); resubmitting it
// follows the turn in progress, or returns how it ended, instead of running
// it twice. Config.Durability says when an append reaches the disk.
// Runtime.Delete stops a session (cancelling its turn) and deletes its
// journal and session memory. A session whose journal fails its integrity
// checks (memory.ErrCorrupt), or cannot be written because the disk is full
// (ENOSPC), stops at once and its callers get that error; the other
// sessions go on. Runtime.Backup copies the store while sessions run.
//
// # Sub-agents
//
// With Config.SubAgents, the spawn_agent tool runs a task in a sub-agent: a
// session whose actor the spawning session starts as its own child,
// subagent/<call-id>, with an id derived from the spawning call, its own
// journal, and a budget for its subtree (see Budget); a TaskAgent's plan
// steps are sub-agents of its session too. The spawn and the result are
// journaled in the parent (SubAgentSpawned, SubAgentFinished): the
// sub-agent reports to its parent when its task has ended and its own
// sub-agents have reported. Every sub-agent ends with a SubAgentFinished
// that carries what its whole subtree spent, whether it completed, failed,
// ran out of budget or was cancelled, so a session's usage is exactly the
// sum of every model call under it: a cancelled turn ends at once, and its
// sub-agents report as they stop; a sub-agent left unfinished by a crash is
// reported when its parent next activates (it is resumed if its parent's
// turn resumes, and otherwise activated only to cancel its turn and settle
// what it spent).
//
// # Streaming
//
// Stream yields one turn's events in the order the session published them:
// TurnStarted, TextDelta, ToolStarted, ToolProgress (a tool's report of a
// call in flight, such as an MCP server's progress notification),
// ToolFinished (with its duration and error flag), UsageReported,
// ContextCompacted and ErrorEvent as they happen, and TurnEnded last;
// Watch yields every event of a session. A slow consumer never blocks the
// session: each subscriber has a buffer of Config.EventBuffer events. When
// it is full, text deltas and tool progress reports are dropped (the
// complete text is in TurnEnded), TurnEnded is always delivered, and any
// other event ends the stream with ErrSlowSubscriber while the turn goes
// on. Breaking out of the loop or cancelling its context stops the stream,
// not the turn.
//
// # Typed output
//
// SubmitAs[T] runs a turn that must end with a T, a struct whose JSON
// Schema is reflected once per runtime as a typed tool's parameters are,
// and returns it decoded; StreamAs[T] is its streaming twin, and
// WithOutputSchema takes a schema document instead. The answer is asked
// for as response_format json_schema, or, for models configured with
// Config.StructuredOutput or AgentProfile.Output as answer_tool, through
// an answer tool the model ends its turn with. An answer that does not
// match is sent back with the problem (WithOutputRetries), then the turn
// fails with an *OutputError carrying the raw answer. The checked answer
// is journaled with the turn's end, so a resumed or resubmitted turn
// returns the same value.
//
// # Tools and MCP
//
// Config.Tools holds the tools agents may call, usually a
// *toolsys.Registry of typed tools (toolsys.Typed) whose calls pass its
// permission pipeline; an agent profile's Tools allow-list narrows them.
// The runtime's own tools (retrieve, spawn_agent, transfer_to_agent) are
// typed tools too, in a registry of the runtime's own composed with
// Config.Tools; spawn_agent and transfer_to_agent act on the session, so
// the session carries their calls out itself. Config.MCPServers connects
// Model Context Protocol servers: each gets one connection actor, named
// mcp/<server> and shared by every session, whose tools are registered in
// that registry as mcp__<server>__<tool> while the server is up. A server
// that exits is reconnected with exponential backoff; one that never comes
// up is given up on after a few attempts and reported by its handle
// (Runtime.MCP), never retried in a loop. Cancelling a turn cancels its
// remote calls, and the server is told. The handle also reaches a
// server's resources and prompts.
//
// # Approvals
//
// When a tool call needs approval (the registry's permission pipeline
// sends it to its approver) and Config.Approver is set, the runtime asks
// through an approver of its own (toolsys.WithApprover): the session
// journals ApprovalRequested and publishes messages.ApprovalPending;
// Config.Approver and Runtime.Approve race to answer, and the first answer
// is journaled as ApprovalGranted or ApprovalDenied, with By saying who
// decided (DecidedByApprover, DecidedByCaller, DecidedByRuntime), before
// the call goes on. Only the call's executor waits; the session's mailbox
// does not. The wait has its own bound, the pipeline's ApprovalTimeout:
// an approval that gets no answer by then has expired, and is journaled
// as denied by the runtime with "approval expired: no answer within ...",
// which the model reads as the call's result. The call's ToolTimeout does
// not run while it waits: it starts, whole, once the call is approved. An
// approval whose turn ends first is denied by the runtime too.
// Session.Approvals and Runtime.Approvals list the pending ones;
// ManualApprover leaves every decision to Runtime.Approve.
//
// After a crash, a call whose approval was requested and never granted is
// treated as not started: the resumed turn runs it again, and so asks
// again, even when its tool is not idempotent. A granted call without a
// result follows the usual rule above.
//
// # Prompts, hooks and services
//
// The system prompt is layered for each model call: Config.BasePrompt,
// the agent profile's prompt (text/template; a missing variable is an
// error), the environment when Config.EnvironmentPrompt asks for it, the
// note left by an agent switch, the session-memory snapshot and, for
// agents with Retrieve, knowledge retrieved for the last user message
// (KnowledgeFrom serves it from a memory/knowledge base). A session keeps
// the layers between its model calls: the templates are rendered again
// when the agent, the turn or the date changes, the session memory is read
// again when a turn starts and after a tool above read-only has run, and
// knowledge is retrieved once per turn. With no prompt configured, a
// request carries the conversation alone.
// Hooks run in registration order at the points named by HookEvent. Two
// service actors serve every session: the compactor, which compacts a
// history past its threshold between turns and after each tool round (the
// turn's next model call waits for it, so that a long tool loop does not
// overflow the context), and at once, then retries the model call a single
// time, when the provider reports a context-length error; and the
// retriever, which answers knowledge queries and backs the retrieve tool.
//
// # Schedules
//
// With Config.Schedules (a schedule.Store on the runtime's store), a third
// service, the scheduler, fires cron schedules into sessions at their fire
// times, timed by Config.Clock. Each fire is journaled in the store before
// its run starts and submitted with a turn id derived from it, so a fire
// resumed after a crash is not run twice; Shutdown stops the scheduler
// first. Register schedule.Tools in Config.Tools to let agents schedule
// their own follow-ups.
package actors
