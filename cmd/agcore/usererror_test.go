package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUserMessage checks that the prefixes naming agcore's Go packages are
// taken out of the messages the command line prints, and nothing else.
func TestUserMessage(t *testing.T) {
	tests := []struct{ in, want string }{
		{`memory: invalid session id "../bad": contains '/'`, `invalid session id "../bad": contains '/'`},
		{"session bad: memory: journal bad seq 3 corrupt: checksum mismatch", "session bad: journal bad seq 3 corrupt: checksum mismatch"},
		{"config: provider x: unknown type", "provider x: unknown type"},
		{"actors: invalid config: workspace: missing", "invalid config: workspace: missing"},
		{"toolsys: tool bash: denied", "tool bash: denied"},
		// A provider's name is the name the configuration gives it.
		{"openai: unavailable: connection refused", "openai: unavailable: connection refused"},
		{"local: rate_limited (status 429)", "local: rate_limited (status 429)"},
		// Only at the start of the message or of one of its parts.
		{"read the memory: it is full", "read the memory: it is full"},
		{"no session named memory", "no session named memory"},
	}
	for _, tt := range tests {
		if got := userMessage(errors.New(tt.in)); got != tt.want {
			t.Errorf("userMessage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestConfigurationErrors checks that a wrong flag or file exits with 2
// and a message that names the flag, without Go package prefixes or Go
// option names, and creates nothing.
func TestConfigurationErrors(t *testing.T) {
	dir := t.TempDir()
	badScript := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badScript, []byte("rules: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"mock-llm on a non-loopback address", []string{"mock-llm", "--addr", "0.0.0.0:0"}, []string{"--addr", "0.0.0.0:0", "loopback"}},
		{"mock-llm on a port out of range", []string{"mock-llm", "--addr", "127.0.0.1:99999"}, []string{"--addr", "99999"}},
		{"mock-llm without its script", []string{"mock-llm", "--addr", "127.0.0.1:0", "--script", filepath.Join(dir, "missing.yaml")}, []string{"--script", "missing.yaml"}},
		{"mock-llm with a bad script", []string{"mock-llm", "--addr", "127.0.0.1:0", "--script", badScript}, []string{"--script", "bad.yaml"}},
		{"serve on a port out of range", []string{"serve", "--addr", "127.0.0.1:99999", "--data-dir", data}, []string{"--addr", "99999"}},
		{"serve on an address without a port", []string{"serve", "--addr", "nonsense", "--data-dir", data}, []string{"--addr", "nonsense"}},
		{"serve with a bad permission mode", []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", data, "--permission-mode", "yolo"}, []string{"--permission-mode", "yolo"}},
		{"run with a model the mock does not have", []string{"--data-dir", data, "run", "--workspace", dir, "--model", "mock/nosuch", "hi"}, []string{`"nosuch"`, "known: mock/scripted"}},
		{"serve with a model the mock does not have", []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", data, "--model", "mock/nosuch"}, []string{`"nosuch"`, "known: mock/scripted"}},
		{"sessions show with a bad id", []string{"--data-dir", seedStore(t, "s1"), "sessions", "show", "../bad"}, []string{`invalid session id "../bad"`}},
		{"run with a bad session id", []string{"--data-dir", data, "run", "--workspace", dir, "--model", "mock/scripted", "--session", "../bad", "hi"}, []string{`invalid session id "../bad"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t.Context(), t, nil, tt.args...)
			if code != exitUsage {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitUsage, stdout, stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			for _, never := range []string{"AllowNonLoopback", "mockllm:", "memory:", "scripted:", "config:"} {
				if strings.Contains(stderr, never) {
					t.Errorf("stderr names %q:\n%s", never, stderr)
				}
			}
			if strings.Contains(stdout, "listening") {
				t.Errorf("it listened:\n%s", stdout)
			}
			if ids := journaledSessions(t, data); len(ids) != 0 {
				t.Errorf("sessions %v were created", ids)
			}
		})
	}
}

// FuzzWithoutPackages checks, on any message (a turn's failure reason may
// hold a provider's or a tool's text), that taking the package prefixes
// out only removes text, never leaves a part that starts with one, and
// changes nothing in a message that has none.
func FuzzWithoutPackages(f *testing.F) {
	for _, s := range []string{
		`memory: invalid session id "../bad": contains '/'`,
		"session bad: memory: journal bad seq 3 corrupt: checksum mismatch",
		"config: config: memory: x",
		"openai: unavailable: connection refused",
		"memory: : : memory:",
		"read the memory: it is full",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := withoutPackages(in)
		if len(out) > len(in) || !strings.HasSuffix(in, out[strings.LastIndex(out, ": ")+1:]) {
			t.Fatalf("withoutPackages(%q) = %q: not a removal", in, out)
		}
		for i := 0; i <= len(out); i++ {
			if i > 0 && !strings.HasSuffix(out[:i], ": ") {
				continue
			}
			if word, _, ok := strings.Cut(out[i:], ": "); ok && isPackageName(word) {
				t.Fatalf("withoutPackages(%q) = %q: a part starts with %q", in, out, word)
			}
		}
		has := false
		for i := 0; i <= len(in); i++ {
			if i == 0 || strings.HasSuffix(in[:i], ": ") {
				if word, _, ok := strings.Cut(in[i:], ": "); ok && isPackageName(word) {
					has = true
				}
			}
		}
		if !has && out != in {
			t.Fatalf("withoutPackages(%q) = %q, want it unchanged", in, out)
		}
	})
}
