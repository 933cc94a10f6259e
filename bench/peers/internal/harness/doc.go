// Package harness runs a peer's turns and measures them: N turns spread
// over C goroutines after a warm-up, with the client's CPU time (user plus
// system, from getrusage) and its allocations (runtime.MemStats) divided by
// the number of turns, the throughput, the p50 and p99 turn latency, and
// the process's peak resident set size.
//
// A peer is a Driver. Each peer is built into a binary of its own, so that
// one library's start-up cost and memory never weigh on another's figures,
// and the mock model runs in another process, so that its CPU is not the
// client's.
package harness
