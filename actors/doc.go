// Package actors is the agcore runtime: supervised sessions of LLM agents
// on protoactor-go, each one an event-sourced journal.
//
// Embed a runtime and stream one turn:
//
//	rt, err := actors.NewInMemory(actors.Config{Provider: provider, Tools: registry})
//	if err != nil {
//		return err
//	}
//	defer rt.Shutdown(ctx)
//	sess, err := rt.Open(ctx, "support-42")
//	if err != nil {
//		return err
//	}
//	for ev, err := range sess.Stream(ctx, messages.UserText("list the files")) {
//		if err != nil {
//			return err
//		}
//		if d, ok := ev.(messages.TextDelta); ok {
//			fmt.Print(d.Text)
//		}
//	}
//
// # Sessions
//
// Each session is an actor named sessions/<id>, activated by Open or by the
// first command that reaches it, and passivated after Config.IdleTimeout.
// A turn is a sequence of messages: the user message is journaled (which
// acknowledges it) and TurnStarted published; a model-call child streams
// the reply; the reply is journaled; each tool call is journaled as started
// and runs in its own child with its own deadline, all calls of one reply
// in parallel up to Limits.MaxParallelTools; results are journaled as they
// arrive and given to the model in call order; the loop ends when the model
// stops, a limit is hit, or the turn is cancelled. The session's mailbox
// never waits on a model or a tool, so Cancel, Status and a user message
// that arrives mid-turn (Limits.MidTurn: queue, interrupt or reject) are
// handled at once.
//
// # Supervision
//
// A tool that fails, panics or overruns its deadline becomes an error
// result the model reads ("tool X panicked: ...", "tool X timed out after
// 30s") and the turn goes on; a tool that ignores its context keeps its
// executor busy until it returns, without holding up the session. A session
// actor that panics (a failed journal append, a bug) is restarted by its
// supervisor and rebuilds its state from the journal; submissions not yet
// journaled are taken up again. When its restart budget runs out the
// session stops and its callers get a *SessionStoppedError with the
// reason; a session fenced off by a newer activation stops at once.
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
// it twice.
//
// # Prompts, hooks and services
//
// The system prompt is layered each model call: Config.BasePrompt, the
// agent profile's prompt (text/template; a missing variable is an error),
// the environment, the note left by an agent switch, the session-memory
// snapshot and, for agents with Retrieve, knowledge retrieved for the last
// user message. Hooks run in registration order at the points named by
// HookEvent. Two service actors serve every session: the compactor, which
// compacts a history past its threshold between turns (and at once, then
// retries the model call, when the provider reports a context-length
// error), and the retriever, which answers knowledge queries and backs the
// retrieve tool.
package actors
