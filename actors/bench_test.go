package actors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

func benchRuntime(b *testing.B) (*actors.Runtime, *scripted.Provider, *toolsys.Registry) {
	b.Helper()
	script := toolScript("done", scripted.ToolCall{Name: "echo", Arguments: "{}"})
	script.Stateless = true
	prov := scripted.MustNew(script, scripted.Options{})
	reg := toolsys.NewRegistry(toolsys.Config{})
	reg.MustRegister(echoTool("echo"))
	rt, err := actors.NewInMemory(actors.Config{Provider: prov, Tools: reg, IdleTimeout: -1, Compaction: actors.Compaction{Disabled: true}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	return rt, prov, reg
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkSessions reports turns per second across n concurrent sessions
// (each turn: a tool call and two model calls) and the heap held per idle
// session.
func BenchmarkSessions(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			rt, _, _ := benchRuntime(b)
			ctx := context.Background()
			before := heapInUse()
			sessions := make([]*actors.Session, n)
			for i := range sessions {
				s, err := rt.Open(ctx, fmt.Sprintf("bench-%d", i))
				if err != nil {
					b.Fatal(err)
				}
				sessions[i] = s
			}
			perSession := float64(heapInUse()-before) / float64(n)
			var next atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					s := sessions[int(next.Add(1))%n]
					if _, err := s.Submit(ctx, messages.UserText("go")); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
			b.ReportMetric(perSession, "bytes/idle-session")
		})
	}
}

// BenchmarkTurnOverhead runs the same turns through the runtime and through
// a bare loop calling the provider and the tools directly, and reports the
// ratio of their times per turn. Both sides do the same work: they stream the
// model's replies, keep the conversation across turns like a session does,
// and start a new conversation every turnsPerConversation turns so history
// length does not grow with b.N.
func BenchmarkTurnOverhead(b *testing.B) {
	const turnsPerConversation = 16
	rt, prov, reg := benchRuntime(b)
	ctx := context.Background()
	var history []messages.Message
	bare := func() {
		history = append(history, messages.UserText("go"))
		for {
			st, err := prov.Stream(ctx, messages.Request{Messages: history, Tools: reg.Definitions()})
			if err != nil {
				b.Fatal(err)
			}
			for _, err := range providers.Chunks(st) {
				if err != nil {
					b.Fatal(err)
				}
			}
			resp := st.Response()
			st.Close()
			history = append(history, resp.Message)
			if len(resp.Message.ToolCalls) == 0 {
				return
			}
			for _, c := range resp.Message.ToolCalls {
				res, err := reg.Call(ctx, c.Name, json.RawMessage(c.Arguments), &toolsys.Context{CallID: c.ID})
				if err != nil {
					b.Fatal(err)
				}
				history = append(history, messages.ToolResultMessage(c.ID, res.Content))
			}
		}
	}
	var (
		sess                  *actors.Session
		runtimeTime, bareTime time.Duration
		turn                  int
	)
	for b.Loop() {
		if turn%turnsPerConversation == 0 {
			var err error
			if sess, err = rt.Open(ctx, fmt.Sprintf("overhead-%d", turn)); err != nil {
				b.Fatal(err)
			}
			history = nil
		}
		turn++
		start := time.Now()
		bare()
		bareTime += time.Since(start)
		start = time.Now()
		if _, err := sess.Submit(ctx, messages.UserText("go")); err != nil {
			b.Fatal(err)
		}
		runtimeTime += time.Since(start)
	}
	b.ReportMetric(float64(runtimeTime.Nanoseconds())/float64(b.N), "runtime-ns/turn")
	b.ReportMetric(float64(bareTime.Nanoseconds())/float64(b.N), "bare-ns/turn")
	b.ReportMetric(float64(runtimeTime)/float64(bareTime), "overhead-ratio")
}

// BenchmarkNewInMemory starts and shuts down an in-memory runtime, and
// reports the heap it keeps while it runs (live-heap-B).
func BenchmarkNewInMemory(b *testing.B) {
	prov := scripted.MustNew(textScript("ok"), scripted.Options{})
	before := heapInUse()
	rt, err := actors.NewInMemory(actors.Config{Provider: prov})
	if err != nil {
		b.Fatal(err)
	}
	live := float64(heapInUse()) - float64(before)
	_ = rt.Shutdown(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		rt, err := actors.NewInMemory(actors.Config{Provider: prov})
		if err != nil {
			b.Fatal(err)
		}
		if err := rt.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(live, "live-heap-B")
}
