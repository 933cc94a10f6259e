package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/memory"
)

// failScript fails every request that contains "fail" with an error the
// runtime does not retry, and answers anything else.
const failScript = `rules:
  - match: {role: user, contains: "fail"}
    reply:
      fail: {kind: bad_request, message: "the scripted model refuses this prompt"}
  - match: {role: user}
    reply: {text: "Fine."}
`

// failureMessage is what failScript's failure reports.
const failureMessage = "the scripted model refuses this prompt"

// writeConfig writes files (name to content) into a new directory, with
// agcore.yaml holding config, and returns the path of agcore.yaml.
func writeConfig(t *testing.T, config string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "agcore.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// failConfig returns a configuration whose model plays failScript, and its
// data directory.
func failConfig(t *testing.T) (path, dataDir string) {
	t.Helper()
	path = writeConfig(t, "data_dir: data\nworkspace: .\ndefault_model: mock/scripted\n"+
		"providers:\n  - {name: mock, type: scripted, script: fail.yaml}\n", map[string]string{"fail.yaml": failScript})
	return path, filepath.Join(filepath.Dir(path), "data")
}

// runCLIInput is runCLI with stdin as the command's standard input.
func runCLIInput(ctx context.Context, t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	code := runIO(ctx, args, strings.NewReader(stdin), &stdout, &stderr, testEnv(t, env))
	return code, stdout.String(), stderr.String()
}

// TestRun_FailurePrintedOnce runs a turn whose model call fails: the
// failure is printed once, on stderr, naming the turn from 1, and the exit
// code is 1; standard output holds nothing of it.
func TestRun_FailurePrintedOnce(t *testing.T) {
	cfg, _ := failConfig(t)
	for _, args := range [][]string{{"run", "please fail"}, {"run", "--json", "please fail"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t.Context(), t, nil, append([]string{"--config", cfg}, args...)...)
			if code != exitError {
				t.Errorf("exit code %d, want %d", code, exitError)
			}
			if n := strings.Count(stderr, failureMessage); n != 1 {
				t.Errorf("stderr names the failure %d times, want once:\n%s", n, stderr)
			}
			if !strings.Contains(stderr, "turn 1 failed: ") || strings.Contains(stderr, "turn 0") {
				t.Errorf("stderr does not name turn 1:\n%s", stderr)
			}
			if args[1] != "--json" && (strings.Contains(stdout, failureMessage) || strings.Contains(stdout, "error:") || strings.Contains(stdout, "failed")) {
				t.Errorf("stdout repeats the failure:\n%s", stdout)
			}
		})
	}
}

// TestChat_PipedFailures plays a chat whose first turn fails: the chat goes
// on, prints the failure once on stderr, and exits 1.
func TestChat_PipedFailures(t *testing.T) {
	cfg, _ := failConfig(t)
	code, stdout, stderr := runCLIInput(t.Context(), t, nil, "please fail\nhello\n", "--config", cfg, "chat")
	if code != exitError {
		t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitError, stdout, stderr)
	}
	if !strings.Contains(stdout, "Fine.") {
		t.Errorf("the chat did not go on after the failed turn:\n%s", stdout)
	}
	if n := strings.Count(stdout+stderr, failureMessage); n != 1 || !strings.Contains(stderr, "turn 1 failed: ") || !strings.Contains(stderr, failureMessage) {
		t.Errorf("the failure is printed %d times, want once on stderr as turn 1\nstdout:\n%s\nstderr:\n%s", n, stdout, stderr)
	}
	if !strings.Contains(stderr, "1 of 2 turns failed") {
		t.Errorf("stderr does not sum up the failed turns:\n%s", stderr)
	}
}

// TestChat_NoInputCreatesNoSession runs chat on input that holds no
// prompt: no session is journaled.
func TestChat_NoInputCreatesNoSession(t *testing.T) {
	for name, input := range map[string]string{"empty": "", "blank lines": "\n  \n", "commands only": "/usage\n/agent\n/exit\n"} {
		t.Run(name, func(t *testing.T) {
			cfg, data := failConfig(t)
			code, stdout, stderr := runCLIInput(t.Context(), t, nil, input, "--config", cfg, "chat")
			if code != exitOK {
				t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if ids := journaledSessions(t, data); len(ids) != 0 {
				t.Errorf("sessions %v were created:\n%s", ids, stdout)
			}
		})
	}
}

// journaledSessions lists the sessions of the data directory dir (none
// when it does not exist).
func journaledSessions(t *testing.T, dir string) []string {
	t.Helper()
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var ids []string
	for id, err := range j.Sessions(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}
