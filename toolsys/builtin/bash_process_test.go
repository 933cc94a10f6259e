package builtin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agcore/agcore/toolsys"
)

// startBackground starts command through bash with run_in_background and
// returns its process.
func startBackground(t *testing.T, pm *ProcessManager, tc *toolsys.Context, command string) *Process {
	t.Helper()
	r, err := NewBash(Options{}, pm).Execute(context.Background(), BashParams{Command: command, RunInBackground: true}, tc)
	r = mustOK(t, r, err)
	p, err := pm.Get(r.Metadata["process_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newManager(t *testing.T, opts ProcessOptions) *ProcessManager {
	t.Helper()
	pm := NewProcessManager(opts)
	t.Cleanup(func() { _ = pm.Close() })
	return pm
}

func TestBashProcess_PollThenBlock(t *testing.T) {
	tc, root := newWorkspace(t)
	pm := newManager(t, ProcessOptions{})
	gate := mkfifo(t, root, "gate")
	bp := NewBashProcess(Options{}, pm)
	p := startBackground(t, pm, tc, "echo started; read line < gate; echo finished; exit 4")
	waitOutput(t, p, "started\n")

	r, err := bp.Execute(context.Background(), BashProcessParams{ProcessID: p.ID()}, tc)
	r = mustOK(t, r, err)
	if !strings.HasPrefix(r.Content, "bg_1 is running") || !strings.HasSuffix(r.Content, "\nstarted\n") {
		t.Fatalf("first poll: %q", r.Content)
	}
	if r.Metadata["status"] != "running" || r.Metadata["new_bytes"] != len("started\n") {
		t.Fatalf("first poll metadata: %v", r.Metadata)
	}

	r, err = bp.Execute(context.Background(), BashProcessParams{ProcessID: p.ID()}, tc)
	r = mustOK(t, r, err)
	if !strings.HasSuffix(r.Content, "(no new output)") {
		t.Fatalf("second poll: %q", r.Content)
	}

	openGate(t, gate)
	r, err = bp.Execute(context.Background(), BashProcessParams{ProcessID: p.ID(), Block: true, TimeoutSeconds: 60}, tc)
	r = mustFail(t, r, err) // exit code 4
	if !strings.HasPrefix(r.Content, "bg_1 exited with code 4") || !strings.HasSuffix(r.Content, "\nfinished\n") {
		t.Fatalf("block: %q", r.Content)
	}
	if r.Metadata["exit_code"] != 4 || r.Metadata["timed_out"] != false || r.Metadata["status"] != "exited" {
		t.Fatalf("block metadata: %v", r.Metadata)
	}
}

func TestBashProcess_BlockTimesOut(t *testing.T) {
	tc, root := newWorkspace(t)
	pm := newManager(t, ProcessOptions{})
	mkfifo(t, root, "never")
	p := startBackground(t, pm, tc, "read line < never")
	r, err := NewBashProcess(Options{}, pm).Execute(context.Background(), BashProcessParams{ProcessID: p.ID(), Block: true, TimeoutSeconds: 1}, tc)
	r = mustOK(t, r, err)
	if r.Metadata["timed_out"] != true || r.Metadata["status"] != "running" {
		t.Fatalf("metadata: %v", r.Metadata)
	}
	if !strings.Contains(r.Content, "did not exit within the block timeout") {
		t.Fatalf("content: %q", r.Content)
	}
}

func TestBashProcess_BlockCancelled(t *testing.T) {
	tc, root := newWorkspace(t)
	pm := newManager(t, ProcessOptions{})
	mkfifo(t, root, "never")
	p := startBackground(t, pm, tc, "read line < never")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewBashProcess(Options{}, pm).Execute(ctx, BashProcessParams{ProcessID: p.ID(), Block: true}, tc)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if p.Info().Status != StatusRunning {
		t.Fatal("cancelling a block stopped the process")
	}
}

func TestBashProcess_StopKillsGroup(t *testing.T) {
	tc, root := newWorkspace(t)
	pm := newManager(t, ProcessOptions{})
	fifo := mkfifo(t, root, "pid")
	p := startBackground(t, pm, tc, "sleep 300 & echo $! > pid; wait")
	pid := readPID(t, fifo, p.Done())
	pidfd := watchPID(t, pid)
	r, err := NewBashProcess(Options{}, pm).Execute(context.Background(), BashProcessParams{ProcessID: p.ID(), Stop: true}, tc)
	r = mustOK(t, r, err)
	if r.Metadata["status"] != "stopped" || !strings.HasPrefix(r.Content, "bg_1 was stopped") {
		t.Fatalf("result: %+v", r)
	}
	assertDead(t, pid, pidfd)
}

func TestBashProcess_List(t *testing.T) {
	tc, root := newWorkspace(t)
	pm := newManager(t, ProcessOptions{})
	bp := NewBashProcess(Options{}, pm)
	r, err := bp.Execute(context.Background(), BashProcessParams{List: true}, tc)
	if r = mustOK(t, r, err); r.Content != "No background processes." {
		t.Fatalf("empty list: %q", r.Content)
	}
	done := startBackground(t, pm, tc, "exit 2")
	if err := done.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, root, "never")
	running := startBackground(t, pm, tc, "read line < never")
	stopped := startBackground(t, pm, tc, "read line < never")
	stopped.Stop()
	if err := stopped.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err = bp.Execute(context.Background(), BashProcessParams{List: true}, tc)
	r = mustOK(t, r, err)
	lines := strings.Split(strings.TrimSpace(r.Content), "\n")
	if len(lines) != 3 || r.Metadata["processes"] != 3 {
		t.Fatalf("list: %q", r.Content)
	}
	for i, want := range []string{"bg_1\texited(2)\t", "bg_2\trunning\t", "bg_3\tstopped\t"} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d = %q, want prefix %q", i, lines[i], want)
		}
	}
	if !strings.HasSuffix(lines[1], "read line < never") || running.ID() != "bg_2" {
		t.Errorf("line 2 = %q", lines[1])
	}
}

func TestBashProcess_Errors(t *testing.T) {
	tc, _ := newWorkspace(t)
	pm := newManager(t, ProcessOptions{})
	bp := NewBashProcess(Options{}, pm)
	tests := []struct {
		name string
		p    BashProcessParams
		want string
	}{
		{name: "unknown with none", p: BashProcessParams{ProcessID: "bg_9"}, want: `no background process "bg_9"; there are no background processes`},
		{name: "nothing", p: BashProcessParams{}, want: "give process_id, or set list to see the background processes"},
		{name: "list with id", p: BashProcessParams{List: true, ProcessID: "bg_1"}, want: "list takes no other arguments"},
		{name: "block and stop", p: BashProcessParams{ProcessID: "bg_1", Block: true, Stop: true}, want: "give block or stop, not both"},
		{name: "timeout without block", p: BashProcessParams{ProcessID: "bg_1", TimeoutSeconds: 3}, want: "timeout_seconds applies to block only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := bp.Execute(context.Background(), tt.p, tc)
			r = mustFail(t, r, err)
			if r.Content != tt.want {
				t.Fatalf("content %q, want %q", r.Content, tt.want)
			}
		})
	}
	p := startBackground(t, pm, tc, "true")
	if err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := bp.Execute(context.Background(), BashProcessParams{ProcessID: "bg_7"}, tc)
	if r = mustFail(t, r, err); r.Content != `no background process "bg_7"; known: bg_1` {
		t.Fatalf("content %q", r.Content)
	}
}
