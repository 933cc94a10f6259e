// Package benchsuite holds agcore's benchmark workloads: plain functions that
// measure one aspect of the runtime and return a typed result. Both
// `agcore bench` and the `go test -bench` entries of this package run them.
//
// Every figure is a rate, or a ratio against a baseline measured in the
// same process and the same run: the two sides run alternately, after a
// warm-up, and the result keeps medians, so that a pause or a burst of load
// on a shared machine hits both sides alike and moves the ratio little.
// Absolute times are reported beside the ratios, with the machine they were
// measured on (see Machine).
//
// The workloads are:
//
//   - turn-overhead: a turn (two model requests over HTTP and one tool call)
//     through the runtime, against a bare go-openai loop doing the same
//     requests and tool call against the same mock server;
//   - fan-out: turns whose reply asks for 1, 4, 16 or 64 parallel tool calls
//     of a tool that waits a fixed time, relative to one call;
//   - sessions: thousands of concurrent sessions on the in-process scripted
//     model: turns/s, turn latency, peak RSS and RSS per idle session;
//   - journal: journal appends per second with sync and batch durability;
//   - retrieval: knowledge queries over a generated corpus of pages, against
//     an exhaustive search of the same index;
//   - recovery: reopening a runtime and resuming every session of its data
//     directory, against loading the same journals without a runtime;
//   - idle-sessions: the RSS and live heap per idle session with a
//     10-message history and the journal on disk, every actor resident
//     and once the runtime has passivated them, and a turn on passivated
//     sessions, answered from their journals.
//
// Run runs a selection of them and gathers a Report, which renders as text
// tables (Report.WriteText) or JSON.
package benchsuite
