package actors_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

func TestSubmit_TextTurn(t *testing.T) {
	f := newFixture(t, textScript("hello back"), nil, nil)
	res, err := f.sess.Submit(t.Context(), messages.UserText("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello back" || res.Outcome != messages.OutcomeCompleted || res.RoundTrips != 1 || res.Turn != 0 {
		t.Fatalf("result = %+v", res)
	}
	st, err := f.sess.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.NextTurn != 1 || st.Messages != 2 || st.Running || st.Usage.TotalTokens == 0 {
		t.Fatalf("status = %+v", st)
	}
}

func TestStream_ToolTurnEventOrder(t *testing.T) {
	f := newFixture(t, toolScript("all done", scripted.ToolCall{Name: "echo", Arguments: `{}`}), []toolsys.Tool{echoTool("echo")}, nil)
	var types []string
	for ev, err := range f.sess.Stream(t.Context(), messages.UserText("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(messages.TextDelta); ok {
			if len(types) == 0 || types[len(types)-1] != "text_delta" {
				types = append(types, "text_delta")
			}
			continue
		}
		types = append(types, ev.EventType())
	}
	want := []string{"turn_started", "usage", "tool_started", "tool_finished", "text_delta", "usage", "turn_ended"}
	if len(types) != len(want) {
		t.Fatalf("events = %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("events = %v, want %v", types, want)
		}
	}
}

func TestNew_ConfigErrors(t *testing.T) {
	prov := scripted.MustNew(textScript("x"), scripted.Options{})
	tests := []struct {
		name string
		cfg  actors.Config
	}{
		{"no provider", actors.Config{}},
		{"bad template", actors.Config{Provider: prov, Agents: []actors.AgentProfile{{Name: "a", Prompt: "{{.X"}}}},
		{"duplicate agent", actors.Config{Provider: prov, Agents: []actors.AgentProfile{{Name: "a"}, {Name: "a"}}}},
		{"unknown default", actors.Config{Provider: prov, DefaultAgent: "nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := actors.NewInMemory(tt.cfg)
			if err == nil {
				_ = rt.Shutdown(context.Background())
				t.Fatal("NewInMemory succeeded")
			}
			if !errorsIs(err, actors.ErrConfig) {
				t.Fatalf("err = %v, want ErrConfig", err)
			}
		})
	}
}

var _ = json.RawMessage(nil)
