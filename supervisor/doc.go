// Package supervisor decides what happens when something in the runtime
// fails, and applies those decisions to protoactor-go actors.
//
// The vocabulary is small. A [Decider] maps the reason of a failure (an
// error, or the value of a recovered panic) to a [Directive]: resume and
// record it (a tool that failed becomes an error result the model reads),
// retry it after a backoff (a rate-limited provider), restart the actor from
// its durable state (a session that panicked), or stop it for good (a
// session whose journal activation was superseded). A [Budget] turns a crash
// loop into a stop with a reason: N failures within a window, measured on an
// injectable [Clock].
//
// Three strategies implement actor.SupervisorStrategy on top of them:
//
//   - [NewSessionStrategy] restarts a failing session actor, which rebuilds
//     its state from the journal, until its budget runs out; a fenced session
//     is stopped, never restarted.
//   - [NewToolStrategy] stops a failing tool executor and reports the failure,
//     so that the session records an error result and the turn goes on.
//   - [NewMCPStrategy] restarts a failed MCP connection after an exponential
//     backoff with jitter, within a budget.
//
// Every decision is logged through the zerolog.Logger given in the options.
package supervisor
