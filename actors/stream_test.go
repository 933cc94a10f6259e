package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// callCounter counts the Chat and Stream calls of a provider.
type callCounter struct {
	providers.Provider
	mu            sync.Mutex
	chats, stream int
}

func (c *callCounter) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	c.mu.Lock()
	c.chats++
	c.mu.Unlock()
	return c.Provider.Chat(ctx, req)
}

func (c *callCounter) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	c.mu.Lock()
	c.stream++
	c.mu.Unlock()
	return c.Provider.Stream(ctx, req)
}

// mergeDeltas returns the golden lines with each run of text_delta events
// merged into one: what a reply that is not streamed publishes.
func mergeDeltas(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	var run *messages.TextDelta
	flush := func() {
		if run == nil {
			return
		}
		data, err := json.Marshal(run)
		if err != nil {
			t.Fatal(err)
		}
		l, err := json.Marshal(goldenLine{Kind: "event", Type: "text_delta", Data: data})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(l))
		run = nil
	}
	for _, l := range lines {
		var gl goldenLine
		if err := json.Unmarshal([]byte(l), &gl); err != nil {
			t.Fatal(err)
		}
		if gl.Kind == "event" && gl.Type == "text_delta" {
			var d messages.TextDelta
			if err := json.Unmarshal(gl.Data, &d); err != nil {
				t.Fatal(err)
			}
			if run == nil {
				run = &d
			} else {
				run.Text += d.Text
			}
			continue
		}
		flush()
		out = append(out, l)
	}
	flush()
	return out
}

// TestNoStream_SameTranscripts plays golden scenarios with streaming off,
// for the runtime and for an agent, and checks that the model is asked with
// Chat only and that the events, requests and journal are those of the
// streamed scenario, with one text delta per reply.
func TestNoStream_SameTranscripts(t *testing.T) {
	broken := &funcTool{name: "broken", perm: toolsys.PermReadOnly, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{}, errors.New("disk on fire")
	}}
	scenarios := []struct {
		golden string
		script scripted.Script
		tools  []toolsys.Tool
		base   string
		input  string
	}{
		{"text_turn", textScript("Hello there, how can I help?"), nil, "You are terse.", "hi"},
		{"tool_error", toolScript("it failed", scripted.ToolCall{Name: "broken", Arguments: `{}`}), []toolsys.Tool{broken}, "", "try it"},
	}
	modes := []struct {
		name string
		mod  func(*actors.Config)
	}{
		{"runtime", func(c *actors.Config) { c.Stream = actors.StreamOff }},
		{"agent", func(c *actors.Config) {
			c.Agents = []actors.AgentProfile{{Name: "default", Stream: actors.StreamOff}}
		}},
	}
	for _, sc := range scenarios {
		for _, mode := range modes {
			t.Run(sc.golden+"/"+mode.name, func(t *testing.T) {
				var counter *callCounter
				g := newGoldenRun(t, nil, sc.script, sc.tools, func(c *actors.Config) {
					c.BasePrompt = sc.base
					mode.mod(c)
					counter = &callCounter{Provider: c.Provider}
					c.Provider = counter
				})
				evs := g.stream(t, "s", sc.input, nil)
				var deltas, replies int
				for _, ev := range evs {
					switch ev.(type) {
					case messages.TextDelta:
						deltas++
					case messages.UsageReported:
						replies++
					}
				}
				if counter.stream != 0 || counter.chats != replies {
					t.Errorf("model calls: %d streamed, %d with Chat; want 0 and %d", counter.stream, counter.chats, replies)
				}
				if deltas != 1 {
					t.Errorf("%d text deltas, want 1 (the one reply with text)", deltas)
				}
				want, err := os.ReadFile(filepath.Join("testdata", "golden_"+sc.golden+".jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				got := g.transcript(t, evs, "s")
				if diff := cmp.Diff(mergeDeltas(t, splitLines(want)), splitLines(got)); diff != "" {
					t.Errorf("transcript differs from the streamed %s (-want +got):\n%s", sc.golden, diff)
				}
			})
		}
	}
}

// TestNoStream_AgentOverridesRuntime checks the precedence: an agent's
// StreamOn streams under a runtime set to StreamOff, and the default agent
// follows the runtime.
func TestNoStream_AgentOverridesRuntime(t *testing.T) {
	tests := []struct {
		name       string
		runtime    actors.StreamMode
		agent      actors.StreamMode
		wantStream bool
	}{
		{"default streams", actors.StreamDefault, actors.StreamDefault, true},
		{"runtime off", actors.StreamOff, actors.StreamDefault, false},
		{"agent on over runtime off", actors.StreamOff, actors.StreamOn, true},
		{"agent off over runtime on", actors.StreamOn, actors.StreamOff, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var counter *callCounter
			f := newFixture(t, textScript("ok"), nil, func(c *actors.Config) {
				c.Stream = tt.runtime
				c.Agents = []actors.AgentProfile{{Name: "a", Stream: tt.agent}}
				counter = &callCounter{Provider: c.Provider}
				c.Provider = counter
			})
			if _, err := f.sess.Submit(t.Context(), messages.UserText("hi")); err != nil {
				t.Fatal(err)
			}
			if got := counter.stream == 1 && counter.chats == 0; got != tt.wantStream {
				t.Errorf("streams=%d chats=%d, want streaming %v", counter.stream, counter.chats, tt.wantStream)
			}
		})
	}
}
