// Package chaos tests agents for crashes: it injects the faults of the
// real world into a runtime's model provider, tools and journal, and
// checks afterwards, from the journals alone, that recovery kept its
// promises. It is what `agcore chaos` runs, and what a test of your own
// agent imports:
//
//	model, err := chaos.NewProvider(myModel, chaos.ProviderOptions{FailRate: 0.2, Seed: 7})
//	tools, err := chaos.NewToolSet(myRegistry, chaos.ToolOptions{PanicRate: 0.1, HangRate: 0.05, Seed: 7})
//	rt, err := actors.New(actors.Config{DataDir: dir, Provider: model, Tools: tools})
//	// ... run turns, noting each acknowledged message (its TurnStarted),
//	// kill the process if you like, restart it, shut down ...
//	rep, err := chaos.CheckDir(ctx, dir, chaos.CheckOptions{
//		Acknowledged: acks, Rerunnable: chaos.RerunnableIn(myRegistry), Settled: true,
//	})
//	for _, v := range rep.Violations {
//		t.Error(v) // "session s1 seq 12: tool_started_once: ..."
//	}
//
// examples/crash-test is that test in full, with a kill loop.
//
// # Faults
//
// A Provider fails a fraction of model calls the way a remote API does
// (rate limited, server error, timeout), spoils replies (a malformed
// chunk, a stream cut short) or delays their first token. A ToolSet, or a
// Tool registered in place of one, makes a fraction of tool calls panic,
// hang until their deadline, fail or start late. A Journal refuses a
// fraction of journal writes as a full disk does. Each draws its faults
// from a seeded random source, so the rates and the order of the draws are
// reproducible (which concurrent call gets which draw depends on
// scheduling); each counts what it injected (Stats) and reports every
// fault to an optional Observer. Injected errors wrap ErrInjected.
//
// # Invariants
//
// Check and CheckDir read every journal entry by entry and return a
// Violation, naming the session, the entry and the Invariant, for every
// acknowledged message lost, duplicated or reordered, every client turn
// id run twice, every turn ended twice or left open, every tool call
// answered twice or not at all, every non-idempotent tool call started
// twice, every gap in the sequence and every entry that does not read.
// Which tools may run twice comes from CheckOptions.Rerunnable, normally
// RerunnableIn of the real tools: FalselyIdempotent, a deliberately broken
// wrapper, lies about a tool so that a test can show the checker failing.
package chaos
