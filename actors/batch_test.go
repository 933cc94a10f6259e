package actors_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// appendLog is a journal that records the event types of each append.
type appendLog struct {
	memory.Journal
	mu      sync.Mutex
	appends []string
}

func (j *appendLog) Append(ctx context.Context, s string, act, tail uint64, evs ...messages.JournalEvent) (uint64, error) {
	types := make([]string, len(evs))
	for i, ev := range evs {
		types[i] = ev.JournalType()
	}
	j.mu.Lock()
	j.appends = append(j.appends, strings.Join(types, "+"))
	j.mu.Unlock()
	return j.Journal.Append(ctx, s, act, tail, evs...)
}

func (j *appendLog) log() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.appends...)
}

func TestTurn_AppendsPerStep(t *testing.T) {
	blockHook := actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
		return actors.HookResult{Block: hc.Call.Name == "blocked"}
	})
	tests := []struct {
		name     string
		script   scripted.Script
		parallel int
		want     []string
	}{
		{name: "text reply", script: textScript("hi"), want: []string{
			"user_message", "assistant_message+turn_completed"}},
		{name: "one call", script: toolScript("done", scripted.ToolCall{Name: "echo", Arguments: `{}`}), want: []string{
			"user_message", "assistant_message+tool_call_started", "tool_result", "assistant_message+turn_completed"}},
		{name: "blocked call joins the reply", script: toolScript("done",
			scripted.ToolCall{Name: "echo", Arguments: `{}`}, scripted.ToolCall{Name: "blocked", Arguments: `{}`}), want: []string{
			"user_message", "assistant_message+tool_call_started+tool_result", "tool_result", "assistant_message+turn_completed"}},
		// A result that frees a slot shares its append with the call that
		// takes the slot: both are facts of the one message the session
		// handled.
		{name: "later calls start with the result before them", parallel: 1, script: toolScript("done", calls("echo", 3)...), want: []string{
			"user_message", "assistant_message+tool_call_started",
			"tool_result+tool_call_started", "tool_result+tool_call_started", "tool_result",
			"assistant_message+turn_completed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prov, err := scripted.New(tt.script, scripted.Options{})
			if err != nil {
				t.Fatal(err)
			}
			store, err := memory.Open(memory.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
			if err != nil {
				t.Fatal(err)
			}
			log := &appendLog{Journal: j}
			reg := toolsys.NewRegistry(toolsys.Config{})
			reg.MustRegister(echoTool("echo"))
			reg.MustRegister(echoTool("blocked"))
			cfg := actors.Config{Journal: log, Provider: prov, Tools: reg, Limits: actors.Limits{MaxParallelTools: tt.parallel}}
			cfg.Hooks.Register(actors.PreToolUse, blockHook)
			rt, err := actors.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Shutdown(context.Background())
			sess, err := rt.Open(t.Context(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sess.Submit(t.Context(), messages.UserText("go")); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, log.log()); diff != "" {
				t.Errorf("appends (-want +got):\n%s", diff)
			}
		})
	}
}
