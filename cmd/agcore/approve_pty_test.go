package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/creack/pty"
)

// ptyOutput collects what a program writes to its pseudo-terminal.
type ptyOutput struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{} // buffered (1): something was read
	done    chan struct{} // closed when the terminal has no more to read
}

// readPTY reads f until it fails (the program has exited).
func readPTY(f interface{ Read([]byte) (int, error) }) *ptyOutput {
	o := &ptyOutput{changed: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(o.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			o.mu.Lock()
			o.b.Write(buf[:n])
			o.mu.Unlock()
			select {
			case o.changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return o
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// waitFor waits until the output holds want.
func (o *ptyOutput) waitFor(t *testing.T, want string) {
	t.Helper()
	for !strings.Contains(o.String(), want) {
		select {
		case <-o.changed:
		case <-o.done:
			if !strings.Contains(o.String(), want) {
				t.Fatalf("the terminal shows no %q:\n%s", want, o.String())
			}
		case <-t.Context().Done():
			t.Fatalf("the terminal shows no %q:\n%s", want, o.String())
		}
	}
}

// testApprovalPTY runs `agcore run` on a pseudo-terminal with a model that
// calls bash: the prompt asks, y lets the command run and n refuses it.
func testApprovalPTY(t *testing.T, bin string) {
	tests := []struct {
		answer, verdict string
		wantRun         bool
	}{
		{"y", "✓ allowed once", true},
		{"n", "✗ denied", false},
	}
	for _, tt := range tests {
		t.Run(tt.answer, func(t *testing.T) {
			cfg, ws, _ := approvalConfig(t, oneCallScript)
			cmd := exec.CommandContext(t.Context(), bin, "--config", cfg, "run", "please make the file")
			cmd.Env = append(userEnv(), "TMPDIR="+t.TempDir(), "NO_COLOR=1")
			f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
			if err != nil {
				t.Skipf("no pseudo-terminal to run the command on: %v", err)
			}
			defer f.Close()
			out := readPTY(f)
			out.waitFor(t, "allow bash? (")
			out.waitFor(t, " [y/a/n] ")
			if _, err := f.Write([]byte(tt.answer + "\r")); err != nil {
				t.Fatal(err)
			}
			out.waitFor(t, tt.verdict)
			werr := cmd.Wait()
			<-out.done
			got := out.String()
			var exit *exec.ExitError
			if werr != nil && !errors.As(werr, &exit) {
				t.Fatal(werr)
			}
			if werr != nil {
				t.Fatalf("exit code %d:\n%s", exit.ExitCode(), got)
			}
			for _, want := range []string{
				"? bash needs approval: tool bash needs execute permission in accept-edits mode\r\n",
				"  command: touch made.txt\r\n",
				"allow bash? (5m00s left) [y/a/n] " + tt.answer + "\r\n" + "  " + tt.verdict,
				"Done with bash.",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("the terminal shows no %q:\n%s", want, got)
				}
			}
			if exists(filepath.Join(ws, "made.txt")) != tt.wantRun {
				t.Errorf("made.txt exists: %v, want %v\n%s", exists(filepath.Join(ws, "made.txt")), tt.wantRun, got)
			}
		})
	}
}
