package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runCLI runs the command line in-process with an empty environment and
// returns the exit code, stdout and stderr.
func runCLI(ctx context.Context, t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr, testEnv(t, env))
	return code, stdout.String(), stderr.String()
}

// testEnv returns the environment env, with TMPDIR a directory of the test
// unless env sets it, so that what a command keeps there goes with the test.
func testEnv(t *testing.T, env map[string]string) func(string) string {
	tmp := t.TempDir()
	return func(k string) string {
		if v, ok := env[k]; ok || k != "TMPDIR" {
			return v
		}
		return tmp
	}
}

func TestRun_HelpAndErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{"no arguments shows help", nil, exitOK, []string{"Usage:", "agcore [command]", "demo", "mock-llm", "version"}, nil},
		{"--help", []string{"--help"}, exitOK, []string{"Usage:", "Available Commands:", "--log-level", "Examples:"}, nil},
		{"help command", []string{"help", "demo"}, exitOK, []string{"agcore demo [flags]", "--base-url", "OPENAI_BASE_URL"}, nil},
		{"subcommand --help", []string{"mock-llm", "--help"}, exitOK, []string{"--addr", "--script", "Examples:"}, nil},
		{"unknown command", []string{"dmeo"}, exitUsage, nil, []string{`unknown command "dmeo" for "agcore"`, "did you mean demo?", "agcore --help"}},
		{"unknown flag", []string{"version", "--frobnicate"}, exitUsage, nil, []string{"unknown flag: --frobnicate", "agcore --help"}},
		{"extra argument", []string{"version", "now"}, exitUsage, nil, []string{`agcore version takes no arguments, got ["now"]`}},
		{"bad log level", []string{"--log-level", "loud", "version"}, exitUsage, nil, []string{`invalid log level "loud"`}},
		{"bad log format", []string{"--log-format=xml", "version"}, exitUsage, nil, []string{`invalid log format "xml"`}},
		{"version", []string{"version"}, exitOK, []string{"agcore ", "go1."}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t.Context(), t, nil, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			for _, want := range tt.wantStdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

func TestRun_Interrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	code, _, stderr := runCLI(ctx, t, nil, "demo")
	if code != exitInterrupted || !strings.Contains(stderr, "interrupted") {
		t.Errorf("exit code %d, stderr %q; want %d", code, stderr, exitInterrupted)
	}
}
