package actors_test

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// BenchmarkReactivatedTurn runs turns on a session whose actor was
// passivated after each one, on disk, with each durability that syncs: a
// turn starts by activating the session again (the activation journaled,
// and synced, with the turn's message). Each op is one such turn (a tool
// call, two model calls); the passivation that follows it is not timed.
func BenchmarkReactivatedTurn(b *testing.B) {
	for _, d := range []memory.Durability{memory.DurabilitySync, memory.DurabilityBatch} {
		b.Run(d.String(), func(b *testing.B) {
			const idle = time.Hour
			clock := newManualClock()
			script := toolScript("done", scripted.ToolCall{Name: "echo", Arguments: "{}"})
			script.Stateless = true
			reg := toolsys.NewRegistry(toolsys.Config{})
			reg.MustRegister(echoTool("echo"))
			rt, err := actors.New(actors.Config{DataDir: b.TempDir(), Durability: d, Provider: scripted.MustNew(script, scripted.Options{}),
				Tools: reg, IdleTimeout: idle, Clock: clock, Compaction: actors.Compaction{Disabled: true}})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
			sess, err := rt.Open(b.Context(), "r")
			if err != nil {
				b.Fatal(err)
			}
			passivate := func() {
				// The timer armed as the session started finds the turn's
				// activity and is armed again; the next finds it idle.
				for range 2 {
					for <-clock.armed != idle {
					}
					clock.fire(idle)
				}
				for slices.Contains(rt.Sessions(), "r") {
					runtime.Gosched()
				}
			}
			passivate()
			b.ResetTimer()
			for range b.N {
				if _, err := sess.Submit(b.Context(), messages.UserText("go")); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				passivate()
				b.StartTimer()
			}
		})
	}
}
