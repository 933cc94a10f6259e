package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/redact"
)

// startServeApp runs `agcore serve --addr 127.0.0.1:0 args...` for a and
// returns its base URL and the line describing its runtime; cancelling ctx
// stops it, and the returned channel yields the command's error.
func startServeApp(t *testing.T, ctx context.Context, a *app, args ...string) (url, runtimeLine string, done <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	a.stdout = pw
	cmd := newServeCmd(a)
	cmd.SetArgs(append([]string{"--addr", "127.0.0.1:0"}, args...))
	cmd.SetOut(pw)
	errc := make(chan error, 1)
	go func() {
		err := cmd.ExecuteContext(ctx)
		pw.CloseWithError(io.EOF)
		errc <- err
	}()
	sc := bufio.NewScanner(pr)
	var lines []string
	for len(lines) < 2 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) < 2 {
		t.Fatalf("output %q, then: %v", lines, <-errc)
	}
	url, ok := strings.CutPrefix(lines[0], "agcore API listening on ")
	if !ok {
		t.Fatalf("first line %q", lines[0])
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return url, lines[1], errc
}

// helloScript answers every user message with one line.
const helloScript = `rules:
  - match: {role: user}
    reply: {text: "Hello from the configured model."}
`

// TestServe_Config serves the runtime of a configuration file: its model,
// agents, data directory, workspace and permission mode, which the flags
// and the environment override as they do for agcore run.
func TestServe_Config(t *testing.T) {
	const file = "data_dir: data\nworkspace: ws\ndefault_model: mock/scripted\n" +
		"providers:\n  - {name: mock, type: scripted, script: hello.yaml}\n" +
		"agents:\n  - name: greeter\n    prompt: You greet.\n  - name: reviewer\n    tools: [read_file]\n"
	tests := []struct {
		name     string
		file     string
		env      map[string]string
		args     func(dir string) []string
		wantData func(dir string) string
		wantWS   func(dir string) string
		wantMode string
	}{
		{"file", file + "permissions:\n  mode: bypass\n", nil, func(string) []string { return nil },
			func(dir string) string { return filepath.Join(dir, "data") }, func(dir string) string { return filepath.Join(dir, "ws") }, "bypass"},
		{"no mode in the file: approvals through the API", file, nil, func(string) []string { return nil },
			func(dir string) string { return filepath.Join(dir, "data") }, func(dir string) string { return filepath.Join(dir, "ws") }, "ask"},
		{"flags over the file", file + "permissions:\n  mode: bypass\n", nil,
			func(dir string) []string {
				return []string{"--data-dir", filepath.Join(dir, "flag-data"), "--workspace", filepath.Join(dir, "flag-ws"), "--permission-mode", "read-only"}
			},
			func(dir string) string { return filepath.Join(dir, "flag-data") }, func(dir string) string { return filepath.Join(dir, "flag-ws") }, "read-only"},
		{"environment over the file", file, map[string]string{"AGCORE_DATA_DIR": "ENV"}, func(string) []string { return nil },
			func(dir string) string { return filepath.Join(dir, "env-data") }, func(dir string) string { return filepath.Join(dir, "ws") }, "ask"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.file, map[string]string{"hello.yaml": helloScript})
			dir := filepath.Dir(path)
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = strings.ReplaceAll(v, "ENV", filepath.Join(dir, "env-data"))
			}
			a := &app{stderr: io.Discard, getenv: func(k string) string { return env[k] }, log: zerolog.Nop(), configPath: path}
			ctx, stop := context.WithCancel(t.Context())
			defer stop()
			url, line, done := startServeApp(t, ctx, a, tt.args(dir)...)
			for _, want := range []string{"model mock/scripted ", "data " + tt.wantData(dir) + " ", "workspace " + tt.wantWS(dir) + " ", "permissions " + tt.wantMode} {
				if !strings.Contains(line, want) {
					t.Errorf("runtime line %q lacks %q", line, want)
				}
			}

			// The file's agents exist, and no other.
			if code, body := request(t, "POST", url+"/v1/sessions", "", `{"id":"r1","agent":"reviewer"}`); code != http.StatusCreated {
				t.Errorf("session with the file's agent: %d %s", code, body)
			}
			if code, body := request(t, "POST", url+"/v1/sessions", "", `{"id":"d1","agent":"default"}`); code == http.StatusCreated {
				t.Errorf("session with an agent the file does not have: %d %s", code, body)
			}
			// The file's model answers.
			if code, body := request(t, "POST", url+"/v1/sessions", "", `{"id":"s1"}`); code != http.StatusCreated {
				t.Fatalf("create: %d %s", code, body)
			}
			code, body := request(t, "POST", url+"/v1/sessions/s1/turns", "", `{"input":"Hi"}`)
			var res struct {
				Outcome string `json:"outcome"`
				Text    string `json:"text"`
			}
			if err := json.Unmarshal([]byte(body), &res); code != http.StatusOK || err != nil || res.Text != "Hello from the configured model." {
				t.Errorf("turn: %d %s", code, body)
			}
			stop()
			if err := <-done; err != nil {
				t.Fatalf("serve returned %v", err)
			}
			if ids := journaledSessions(t, tt.wantData(dir)); !slices.Contains(ids, "s1") || !slices.Contains(ids, "r1") {
				t.Errorf("sessions journaled in %s: %v", tt.wantData(dir), ids)
			}
		})
	}
}

// TestServe_MockMasksTheKey serves the embedded mock LLM with an API key in
// the environment and on the command line: the keys are not sent to the
// mock, yet the process's redactor masks them, as when they are used.
func TestServe_MockMasksTheKey(t *testing.T) {
	const envKey, flagKey = "custom-env-key-0123456789", "custom-flag-key-9876543210"
	r := redact.New()
	a := &app{stderr: io.Discard, getenv: func(k string) string {
		if k == "OPENAI_API_KEY" {
			return envKey
		}
		return ""
	}, log: zerolog.Nop(), redactor: r}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	_, line, done := startServeApp(t, ctx, a, "--data-dir", filepath.Join(t.TempDir(), "data"), "--api-key", flagKey)
	if !strings.Contains(line, "(embedded mock LLM)") {
		t.Fatalf("runtime line %q: not the mock", line)
	}
	for _, key := range []string{envKey, flagKey} {
		if got := r.String("key " + key); strings.Contains(got, key) {
			t.Errorf("the redactor lets %q through: %q", key, got)
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
}
