package actors_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// journalWriter writes session journals by hand, as a runtime that
// crashed would have left them.
type journalWriter struct {
	t     *testing.T
	j     memory.Journal
	close func()
}

// newJournalWriter writes to a journal of its own over store; close it
// before a runtime uses store.
func newJournalWriter(t *testing.T, store *memory.Store) *journalWriter {
	t.Helper()
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		t.Fatal(err)
	}
	return &journalWriter{t: t, j: j, close: func() {
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}}
}

// write activates session and appends events to its journal.
func (w *journalWriter) write(session string, events ...messages.JournalEvent) {
	w.t.Helper()
	ctx := w.t.Context()
	activation, tail, err := w.j.Activate(ctx, session, "crashed")
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.j.Append(ctx, session, activation, tail, events...); err != nil {
		w.t.Fatal(err)
	}
}

func assistantCalls(calls ...messages.ToolCall) messages.Message {
	return messages.Message{Role: messages.RoleAssistant, ToolCalls: calls}
}

// ownUsage sums the usage of session's own model calls, from its journal.
func ownUsage(t *testing.T, j memory.Journal, session string) (messages.Usage, float64) {
	t.Helper()
	var u messages.Usage
	var cost float64
	for entry, err := range j.Read(t.Context(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if am, ok := entry.Event.(messages.AssistantMessage); ok {
			u, cost = u.Add(am.Usage), cost+am.Cost
		}
	}
	return u, cost
}

// journaledResults returns the results of the tool calls of session's turn
// turn, by call id, from its journal: unlike the stream of a turn that a
// submission joins when it is resumed, the journal holds every one.
func journaledResults(t *testing.T, j memory.Journal, session string, turn int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for entry, err := range j.Read(t.Context(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := entry.Event.(messages.ToolResult); ok && r.Turn == turn {
			out[r.CallID] = r.Content
		}
	}
	return out
}

// treeUsage sums the own usage of root and of every sub-agent session
// under it: what the whole tree spent, model call by model call.
func treeUsage(t *testing.T, j memory.Journal, root string) (messages.Usage, float64) {
	t.Helper()
	u, cost := ownUsage(t, j, root)
	for id, err := range j.Sessions(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(id, root+":sub:") {
			su, sc := ownUsage(t, j, id)
			u, cost = u.Add(su), cost+sc
		}
	}
	return u, cost
}

// TestSpawnAgent_ResumedBudget resumes a sub-agent tree that a crash left
// half-way: coordinator p spawned lead (its budget below), lead spawned
// worker (in the wall-time case 1.5 s and 1 s before the resume), and
// worker had made two model calls (100 tokens and a cost of 1 each) when
// the process died. Whatever the subtree spent before the crash
// counts once towards lead's budget after the resume: the next model call
// exhausts it, and lead's whole subtree is stopped.
func TestSpawnAgent_ResumedBudget(t *testing.T) {
	u100 := messages.Usage{PromptTokens: 90, CompletionTokens: 10, TotalTokens: 100}
	const (
		lead   = "p:sub:c1"
		worker = "p:sub:c1:sub:g1"
	)
	tests := []struct {
		name   string
		budget string // lead's spawn budget, as JSON
		clock  bool   // a manual clock that starts 1.5 s after lead's spawn and 1 s after worker's
		want   string // the coordinator's spawn result
	}{
		{"tokens", `{"max_tokens":250}`, false, "sub-agent p:sub:c1 stopped: budget of 250 tokens exhausted (used 300)"},
		{"cost", `{"max_cost":2.5}`, false, "sub-agent p:sub:c1 stopped: budget of 2.5000 cost exhausted (spent 3.0000)"},
		// lead's own spawn call and worker's two calls used three round
		// trips: worker may make no more (its turn stops at the limit), and
		// lead's next call is one too many.
		{"round trips", `{"max_round_trips":3}`, false, "sub-agent p:sub:c1 stopped: budget of 3 model round trips exhausted"},
		{"wall time", `{"max_seconds":2}`, true, "sub-agent p:sub:c1 stopped: budget of 2s wall time exhausted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, err := memory.Open(memory.Options{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = store.Close() })
			clock := newManualClock()
			spawned := time.Now()
			if tt.clock {
				spawned = clock.Now().Add(-1500 * time.Millisecond)
			}
			// worker inherits lead's 2 s of wall time: its own timer, 1 s,
			// is never fired.
			workerSpawned := spawned.Add(500 * time.Millisecond)
			spawnLead := messages.ToolCall{ID: "c1", Name: actors.SpawnAgentToolName,
				Arguments: `{"system_prompt":"You lead.","task":"lead the work","budget":` + tt.budget + `}`}
			spawnWorker := messages.ToolCall{ID: "g1", Name: actors.SpawnAgentToolName,
				Arguments: `{"system_prompt":"You work.","tools":["work"],"task":"do the work"}`}
			work := func(id string) messages.ToolCall { return messages.ToolCall{ID: id, Name: "work", Arguments: "{}"} }
			w := newJournalWriter(t, store)
			w.write("p",
				messages.UserMessage{TurnID: "t1", Turn: 0, Message: messages.UserText("delegate")},
				messages.AssistantMessage{Turn: 0, Message: assistantCalls(spawnLead), FinishReason: messages.FinishToolCalls},
				messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: spawnLead.Name, Arguments: spawnLead.Arguments},
				messages.SubAgentSpawned{Turn: 0, CallID: "c1", Child: lead, Agent: "subagent", Task: "lead the work", At: spawned},
			)
			w.write(lead,
				messages.UserMessage{TurnID: "task", Turn: 0, Message: messages.UserText("lead the work")},
				messages.AssistantMessage{Turn: 0, Message: assistantCalls(spawnWorker), FinishReason: messages.FinishToolCalls},
				messages.ToolCallStarted{Turn: 0, CallID: "g1", Name: spawnWorker.Name, Arguments: spawnWorker.Arguments},
				messages.SubAgentSpawned{Turn: 0, CallID: "g1", Child: worker, Agent: "subagent", Task: "do the work", At: workerSpawned},
			)
			w.write(worker,
				messages.UserMessage{TurnID: "task", Turn: 0, Message: messages.UserText("do the work")},
				messages.AssistantMessage{Turn: 0, Message: assistantCalls(work("w1")), FinishReason: messages.FinishToolCalls, Usage: u100, Cost: 1},
				messages.ToolCallStarted{Turn: 0, CallID: "w1", Name: "work", Arguments: "{}"},
				messages.ToolResult{Turn: 0, CallID: "w1", Name: "work", Content: "worked"},
				messages.AssistantMessage{Turn: 0, Message: assistantCalls(work("w2")), FinishReason: messages.FinishToolCalls, Usage: u100, Cost: 1},
			)
			w.close()

			// Resumed, the worker works on (100 tokens and a cost of 1 a
			// call; in the wall-time case until it is cancelled) and lead
			// and p answer "done".
			script := scripted.Script{Rules: []scripted.Rule{
				{Match: scripted.Match{Tool: "work"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "work", Arguments: "{}"}}, Usage: &u100}},
				{Match: scripted.Match{Tool: actors.SpawnAgentToolName}, Reply: scripted.Reply{Text: "done"}},
			}}
			workTool := echoTool("work")
			if tt.clock {
				workTool = &funcTool{name: "work", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
					<-ctx.Done()
					return toolsys.Result{}, ctx.Err()
				}}
			}
			reg := toolsys.NewRegistry(toolsys.Config{})
			reg.MustRegister(workTool)
			cfg := actors.Config{Store: store, Provider: scripted.MustNew(script, scripted.Options{}), Tools: reg,
				SubAgents: actors.SubAgents{Enabled: true}, Limits: actors.Limits{ToolTimeout: -1},
				// Each call reports 10 completion tokens: a cost of 1.
				Prices: providers.PriceTable{scripted.DefaultModel: {OutputPerMillion: 100_000}}}
			if tt.clock {
				// The clock arms the sub-agents' wall-time timers only.
				cfg.Clock, cfg.IdleTimeout = clock, -1
			}
			rt, err := actors.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = rt.Shutdown(ctx)
			})
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			done := make(chan *actors.TurnResult, 1)
			go func() {
				sess, err := rt.Open(ctx, "p")
				if err != nil {
					t.Error(err)
					close(done)
					return
				}
				res, err := sess.Submit(ctx, messages.UserText("delegate"), actors.WithTurnID("t1"))
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			if tt.clock {
				// lead and worker resume concurrently, and either may arm
				// its timer first: fire lead's, the 500ms its budget had
				// left.
				const leadLeft, workerLeft = 500 * time.Millisecond, time.Second
			wait:
				for {
					select {
					case armed := <-clock.armed:
						switch armed {
						case leadLeft:
							break wait
						case workerLeft:
						default:
							t.Fatalf("a wall-time timer of %v was armed, want lead's %v (or worker's %v)", armed, leadLeft, workerLeft)
						}
					case <-ctx.Done():
						t.Fatalf("lead's wall-time timer of %v was never armed", leadLeft)
					}
				}
				clock.fire(leadLeft)
			}
			res := <-done
			if res == nil {
				t.Fatal("the resumed turn did not end")
			}
			// The turn's stream, joined after the resume started it, may
			// have missed the spawn's result: the journal has it.
			if got := journaledResults(t, rt.Journal(), "p", 0); len(got) != 1 || got["c1"] != tt.want {
				t.Errorf("spawn results = %q, want c1: %q", got, tt.want)
			}
			sess, err := rt.Open(ctx, "p")
			if err != nil {
				t.Fatal(err)
			}
			rep, err := sess.Usage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantU, wantCost := treeUsage(t, rt.Journal(), "p")
			if rep.Total != wantU || rep.TotalCost != wantCost {
				t.Errorf("p's usage total = %+v cost %v; the tree spent %+v cost %v", rep.Total, rep.TotalCost, wantU, wantCost)
			}
		})
	}
}
