package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// startServe runs `agcore serve` with args on a free loopback port and
// returns its base URL; cancelling the test's context stops it, and the
// returned channel yields the command's error.
func startServe(t *testing.T, ctx context.Context, args ...string) (string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	a := &app{stdout: pw, stderr: io.Discard, getenv: func(string) string { return "" }, log: zerolog.Nop()}
	cmd := newServeCmd(a)
	cmd.SetArgs(append([]string{"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(t.TempDir(), "data"),
		"--workspace", filepath.Join(t.TempDir(), "ws")}, args...))
	cmd.SetOut(pw)
	done := make(chan error, 1)
	go func() {
		err := cmd.ExecuteContext(ctx)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no output: %v", <-done)
	}
	line := sc.Text()
	url, ok := strings.CutPrefix(line, "agcore API listening on ")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return url, done
}

func request(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestServe(t *testing.T) {
	ctx, stop := context.WithCancel(t.Context())
	url, done := startServe(t, ctx, "--token", "tok", "--permission-mode", "bypass")

	if code, body := request(t, "GET", url+"/v1/sessions", "", ""); code != http.StatusUnauthorized {
		t.Errorf("without token: %d %s", code, body)
	}
	if code, body := request(t, "GET", url+"/healthz", "", ""); code != http.StatusOK {
		t.Errorf("healthz: %d %s", code, body)
	}
	if code, body := request(t, "POST", url+"/v1/sessions", "tok", `{"id":"s1"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body := request(t, "POST", url+"/v1/sessions/s1/turns", "tok", `{"input":"Summarise the project"}`)
	var res struct {
		Outcome string `json:"outcome"`
		Text    string `json:"text"`
	}
	if err := json.Unmarshal([]byte(body), &res); code != http.StatusOK || err != nil || res.Outcome != "completed" || res.Text == "" {
		t.Fatalf("turn: %d %s", code, body)
	}
	if code, body := request(t, "GET", url+"/metrics", "tok", ""); code != http.StatusOK ||
		!strings.Contains(body, `agcore_turns_total{outcome="completed"} 1`) || !strings.Contains(body, `agcore_tool_calls_total{tool="write_file"} 1`) {
		t.Errorf("metrics: %d %s", code, body)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("serve returned %v", err)
	}
}

func TestServe_BadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"permission mode", []string{"--permission-mode", "yolo"}, "--permission-mode"},
		{"address", []string{"--addr", "127.0.0.1:99999"}, "listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &app{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }, log: zerolog.Nop()}
			cmd := newServeCmd(a)
			cmd.SetArgs(append([]string{"--data-dir", t.TempDir(), "--workspace", t.TempDir()}, tt.args...))
			cmd.SetOut(io.Discard)
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			err := cmd.ExecuteContext(t.Context())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}
