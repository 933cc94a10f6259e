package scripted_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

func TestLoadFile(t *testing.T) {
	want := scripted.Script{Stateless: true, Rules: []scripted.Rule{
		{Name: "ask weather", Match: scripted.Match{Role: messages.RoleUser, Regexp: `(?i)weather in \w+`}, Reply: scripted.Reply{
			Text:      "Let me check.",
			ToolCalls: []scripted.ToolCall{{Name: "get_weather", Arguments: `{"city":"Oslo","unit":"celsius"}`}},
		}},
		{Name: "answer", Match: scripted.Match{Tool: "get_weather"}, Reply: scripted.Reply{
			Text:    "It is 21 degrees and sunny in Oslo.",
			Usage:   &messages.Usage{PromptTokens: 40, CompletionTokens: 9},
			Latency: 150 * time.Millisecond,
		}},
		{Match: scripted.Match{Any: true}, Turns: []scripted.Reply{
			{Fail: &scripted.Failure{Kind: scripted.FailRateLimit, RetryAfter: 2 * time.Second}},
			{Text: "I only know about the weather."},
		}},
	}}
	for _, name := range []string{"demo.yaml", "demo.json"} {
		t.Run(name, func(t *testing.T) {
			got, err := scripted.LoadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatalf("LoadFile: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("script (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadFile_Errors(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "script.txt")
	if err := os.WriteFile(txt, []byte("rules: []"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := scripted.LoadFile(txt); err == nil || !strings.Contains(err.Error(), `unknown script format ".txt"`) {
		t.Errorf("LoadFile(.txt) = %v, want an unknown format error", err)
	}
	if _, err := scripted.LoadFile(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile(missing) = %v, want os.ErrNotExist", err)
	}
}

func TestParse_Errors(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		rule  int
		field string
		msg   string
	}{
		{"no rules", `rules: []`, -1, "rules", "no rules"},
		{"unknown field", "rules:\n- match: {any: true}\n  reply: {txt: hi}", 0, "rules[0]", `unknown field "txt"`},
		{"empty match", "rules:\n- match: {any: true}\n  reply: {text: a}\n- match: {}\n  reply: {text: b}", 1, "rules[1].match", "no condition"},
		{"any with others", "rules:\n- match: {any: true, contains: x}\n  reply: {text: a}", 0, "rules[0].match.any", "excludes"},
		{"bad role", "rules:\n- match: {role: assistant}\n  reply: {text: a}", 0, "rules[0].match.role", "must be user or tool"},
		{"bad regexp", "rules:\n- match: {regexp: '(('}\n  reply: {text: a}", 0, "rules[0].match.regexp", "missing closing )"},
		{"empty reply", "rules:\n- match: {any: true}\n  reply: {}", 0, "rules[0].reply", "needs text, tool calls or a failure"},
		{"no reply", "rules:\n- match: {any: true}", 0, "rules[0].reply", "needs text"},
		{"nameless call", "rules:\n- match: {any: true}\n  turns:\n  - text: a\n  - tool_calls: [{arguments: {}}]", 0, "rules[0].turns[1].tool_calls[0].name", "missing"},
		{"bad latency", "rules:\n- match: {any: true}\n  reply: {text: a, latency: soon}", 0, "rules[0].reply.latency", "invalid duration"},
		{"bad kind", "rules:\n- match: {any: true}\n  reply: {fail: {kind: meltdown}}", 0, "rules[0].reply.fail.kind", `unknown failure kind "meltdown"`},
		{"retry after on server", "rules:\n- match: {any: true}\n  reply: {fail: {kind: server, retry_after: 1s}}", 0, "rules[0].reply.fail.retry_after", "only a rate_limit"},
		{"once and turns", "rules:\n- match: {any: true}\n  once: true\n  turns: [{text: a}]", 0, "rules[0].once", "exclusive"},
		{"reply and turns", "rules:\n- match: {any: true}\n  reply: {text: a}\n  turns: [{text: b}]", 0, "rules[0].reply", "exclusive"},
		{"stateless once", "stateless: true\nrules:\n- match: {any: true}\n  once: true\n  reply: {text: a}", 0, "rules[0].once", "stateful"},
		{"stateless failures", "stateless: true\nrules:\n- match: {any: true}\n  reply: {text: a}\nfailures: [{calls: [1], fail: {kind: server}}]", -1, "failures[0]", "stateful"},
		{"call zero", "rules:\n- match: {any: true}\n  reply: {text: a}\nfailures: [{calls: [0], fail: {kind: server}}]", -1, "failures[0].calls[0]", "start at 1"},
		{"no calls", "rules:\n- match: {any: true}\n  reply: {text: a}\nfailures: [{fail: {kind: server}}]", -1, "failures[0].calls", "no call numbers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scripted.ParseYAML([]byte(tt.yaml))
			var se *scripted.ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *ScriptError", err)
			}
			if se.Rule != tt.rule || se.Field != tt.field || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %q (rule %d, field %q), want rule %d, field %q, containing %q", err, se.Rule, se.Field, tt.rule, tt.field, tt.msg)
			}
		})
	}
}

func TestParse_Syntax(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) (scripted.Script, error)
		data  string
	}{
		{"json", scripted.ParseJSON, `{"rules": [`},
		{"json trailing data", scripted.ParseJSON, `{"rules": []} {}`},
		{"json unknown top-level field", scripted.ParseJSON, `{"rulez": []}`},
		{"yaml", scripted.ParseYAML, "rules: [\n"},
		{"yaml non-string key", scripted.ParseYAML, "rules:\n- match: {1: x}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.parse([]byte(tt.data)); err == nil || !strings.HasPrefix(err.Error(), "scripted: ") {
				t.Errorf("err = %v, want a scripted: error", err)
			}
		})
	}
}

func TestParse_Arguments(t *testing.T) {
	s, err := scripted.ParseJSON([]byte(`{"rules": [{"match": {"any": true}, "reply": {"tool_calls": [
		{"name": "a", "arguments": "{\"raw\": true"},
		{"name": "b", "arguments": { "spaced" : [1, 2] }},
		{"name": "c"}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Rules[0].Reply.ToolCalls {
		got = append(got, c.Arguments)
	}
	if diff := cmp.Diff([]string{`{"raw": true`, `{"spaced":[1,2]}`, ""}, got); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
}

func FuzzParseYAML(f *testing.F) {
	for _, name := range []string{"testdata/demo.yaml", "testdata/demo.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("rules:\n- match: {tool: x}\n  turns: [{fail: {kind: timeout, after_chunks: 2}}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scripted.ParseYAML(data)
		if err != nil {
			return
		}
		// A script that parses is valid and plays without panicking.
		noSleep := func(context.Context, time.Duration) error { return nil }
		p, err := scripted.New(s, scripted.Options{Sleep: noSleep})
		if err != nil {
			t.Fatalf("a parsed script is refused by New: %v", err)
		}
		_, _ = p.Chat(t.Context(), messages.Request{Messages: []messages.Message{messages.UserText("weather in Oslo")}})
	})
}
