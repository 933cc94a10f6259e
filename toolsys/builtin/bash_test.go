package builtin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/toolsys"
)

func TestBash(t *testing.T) {
	tc, root := newWorkspace(t)
	t.Setenv("AGCORE_TEST_LEAK", "leaked")
	tests := []struct {
		name     string
		opts     Options
		p        BashParams
		want     string // content contains
		wantErr  bool
		exitCode int
	}{
		{name: "stdout and stderr", p: BashParams{Command: "echo out; echo err >&2"}, want: "out\nerr\n"},
		{name: "no output", p: BashParams{Command: "true"}, want: "(no output)"},
		{name: "exit code", p: BashParams{Command: "echo partial; exit 3"}, want: "Command failed with exit code 3.\npartial\n", wantErr: true, exitCode: 3},
		{name: "runs in the workspace root", p: BashParams{Command: "pwd"}, want: root + "\n"},
		{name: "minimal environment", p: BashParams{Command: `echo "${AGCORE_TEST_LEAK:-unset} ${LANG:+lang} ${PATH:+path}"`}, want: "unset lang path\n"},
		{name: "extra environment", p: BashParams{Command: `echo "$TOKEN"`, Env: map[string]string{"TOKEN": "s3cret"}}, want: "s3cret\n"},
		{name: "empty command", p: BashParams{Command: "  "}, want: "command is empty", wantErr: true},
		{name: "bad env name", p: BashParams{Command: "true", Env: map[string]string{"A-B": "x"}}, want: `env: "A-B" is not a valid variable name`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewBash(tt.opts, nil).Execute(context.Background(), tt.p, tc)
			if err != nil {
				t.Fatal(err)
			}
			if r.IsError != tt.wantErr {
				t.Fatalf("IsError = %v, content %q", r.IsError, r.Content)
			}
			if !strings.Contains(r.Content, tt.want) {
				t.Fatalf("content %q does not contain %q", r.Content, tt.want)
			}
			if r.Metadata != nil {
				if r.Metadata["exit_code"] != tt.exitCode || r.Metadata["timed_out"] != false {
					t.Errorf("metadata = %v", r.Metadata)
				}
				if _, ok := r.Metadata["duration_ms"].(int64); !ok {
					t.Errorf("duration_ms = %#v", r.Metadata["duration_ms"])
				}
			}
		})
	}
}

func TestBash_OutputCapEndsWithTail(t *testing.T) {
	tc, _ := newWorkspace(t)
	r, err := NewBash(Options{BashMaxOutput: 100}, nil).Execute(context.Background(),
		BashParams{Command: "head -c 1000 /dev/zero | tr '\\0' a; echo; echo END"}, tc)
	r = mustOK(t, r, err)
	if !strings.HasPrefix(r.Content, "[905 bytes of earlier output omitted]\n") || !strings.HasSuffix(r.Content, "a\nEND\n") {
		t.Fatalf("content = %q", r.Content)
	}
}

func TestBash_NoWorkspace(t *testing.T) {
	r, err := NewBash(Options{}, nil).Execute(context.Background(), BashParams{Command: "true"}, &toolsys.Context{})
	r = mustFail(t, r, err)
	if r.Content != "no workspace configured" {
		t.Fatalf("content = %q", r.Content)
	}
}

// runBash runs a command that reports a child's pid through the fifo
// "pid" in the workspace, and returns the child's pid (with a pidfd on it)
// and a channel that yields the call's outcome.
func runBash(t *testing.T, ctx context.Context, b *Bash, p BashParams) (pid, pidfd int, result <-chan bashOutcome) {
	t.Helper()
	tc, root := newWorkspace(t)
	fifo := mkfifo(t, root, "pid")
	out := make(chan bashOutcome, 1)
	done := make(chan struct{})
	go func() {
		r, err := b.Execute(ctx, p, tc)
		out <- bashOutcome{r, err}
		close(done)
	}()
	pid = readPID(t, fifo, done)
	return pid, watchPID(t, pid), out
}

type bashOutcome struct {
	r   toolsys.Result
	err error
}

func TestBash_CancelKillsChildren(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pid, pidfd, result := runBash(t, ctx, NewBash(Options{}, nil), BashParams{Command: "sleep 300 & echo $! > pid; wait"})
	cancel()
	got := <-result
	if !errors.Is(got.err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", got.err)
	}
	assertDead(t, pid, pidfd)
}

func TestBash_TimeoutKillsChildren(t *testing.T) {
	pid, pidfd, result := runBash(t, context.Background(), NewBash(Options{}, nil),
		BashParams{Command: "echo before; sleep 300 & echo $! > pid; wait", TimeoutSeconds: 1})
	got := <-result
	r := mustFail(t, got.r, got.err)
	if !strings.Contains(r.Content, "Command timed out after 1s and was killed.\nbefore\n") {
		t.Errorf("content = %q", r.Content)
	}
	if r.Metadata["timed_out"] != true || r.Metadata["exit_code"] != -1 {
		t.Errorf("metadata = %v", r.Metadata)
	}
	assertDead(t, pid, pidfd)
}

func TestBash_DefaultTimeoutFromOptions(t *testing.T) {
	tc, _ := newWorkspace(t)
	r, err := NewBash(Options{BashTimeout: 50 * time.Millisecond}, nil).Execute(context.Background(), BashParams{Command: "sleep 300"}, tc)
	r = mustFail(t, r, err)
	if r.Metadata["timed_out"] != true {
		t.Fatalf("metadata = %v", r.Metadata)
	}
}

func TestBash_LeftoverChildrenKilledOnExit(t *testing.T) {
	pid, pidfd, result := runBash(t, context.Background(), NewBash(Options{}, nil), BashParams{Command: "sleep 300 & echo $! > pid"})
	got := <-result
	mustOK(t, got.r, got.err)
	assertDead(t, pid, pidfd)
}

func TestBash_Background(t *testing.T) {
	tc, _ := newWorkspace(t)
	pm := NewProcessManager(ProcessOptions{})
	t.Cleanup(func() { _ = pm.Close() })
	r, err := NewBash(Options{}, pm).Execute(context.Background(), BashParams{Command: "echo hi", RunInBackground: true, Description: "greet"}, tc)
	r = mustOK(t, r, err)
	if r.Metadata["process_id"] != "bg_1" || !strings.Contains(r.Content, "bg_1") {
		t.Fatalf("result = %+v", r)
	}
	p, err := pm.Get("bg_1")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out, _ := p.ReadNew(); out != "hi\n" {
		t.Fatalf("output %q", out)
	}
	if info := p.Info(); info.Description != "greet" || info.Status != StatusExited || info.PID != r.Metadata["pid"] {
		t.Fatalf("info = %+v", info)
	}
}

func TestBash_BackgroundUnavailable(t *testing.T) {
	tc, _ := newWorkspace(t)
	r, err := NewBash(Options{}, nil).Execute(context.Background(), BashParams{Command: "true", RunInBackground: true}, tc)
	mustFail(t, r, err)
	pm := NewProcessManager(ProcessOptions{})
	_ = pm.Close()
	r, err = NewBash(Options{}, pm).Execute(context.Background(), BashParams{Command: "true", RunInBackground: true}, tc)
	r = mustFail(t, r, err)
	if !strings.Contains(r.Content, "no longer accepted") {
		t.Fatalf("content = %q", r.Content)
	}
}

func TestCommandEnv(t *testing.T) {
	t.Setenv("PATH", "")
	t.Setenv("LANG", "")
	t.Setenv("HOME", "/home/x")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	got := commandEnv(map[string]string{"B": "2", "A": "1", "PATH": "/custom"})
	want := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/home/x", "A=1", "B=2", "PATH=/custom"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("env = %q, want %q", got, want)
	}
}
