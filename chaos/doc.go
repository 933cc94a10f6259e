// Package chaos injects faults into model providers and tools, for the
// reliability tests: a Provider fails a fraction of its calls the way a
// remote API does (rate limited, server error, timeout), and a ToolSet or a
// Tool makes a fraction of tool calls panic or hang until their context is
// done. The faults are drawn from a seeded random source, so a run's fault
// rates and the order of its draws are reproducible; which concurrent call
// receives which draw depends on scheduling.
//
//	prov, err := chaos.NewProvider(scripted.MustNew(script, scripted.Options{}),
//		chaos.ProviderOptions{FailRate: 0.2, Seed: 7})
//	tools, err := chaos.NewToolSet(registry, chaos.ToolOptions{PanicRate: 0.1, HangRate: 0.05, Seed: 7})
//	rt, err := actors.New(actors.Config{Provider: prov, Tools: tools, ...})
//
// Every wrapper counts what it injected (Stats), so that a test can check
// that the faults happened and that each one was reported.
package chaos
