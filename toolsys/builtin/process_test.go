package builtin

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestOutputLog_Since(t *testing.T) {
	l := newOutputLog(4)
	_, _ = l.Write([]byte("ab"))
	data, next, dropped := l.since(0, false)
	if string(data) != "ab" || next != 2 || dropped != 0 {
		t.Fatalf("since(0) = %q %d %d", data, next, dropped)
	}
	// "é" is split across writes: the first half is held back.
	_, _ = l.Write([]byte("c\xc3"))
	data, next, _ = l.since(next, false)
	if string(data) != "c" || next != 3 {
		t.Fatalf("since(2) = %q %d", data, next)
	}
	_, _ = l.Write([]byte("\xa9"))
	data, next, _ = l.since(next, false)
	if string(data) != "é" || next != 5 {
		t.Fatalf("since(3) = %q %d", data, next)
	}
	// Outgrow twice the limit: the oldest bytes go.
	_, _ = l.Write([]byte("0123456789"))
	data, next, dropped = l.since(next, true)
	if string(data) != "6789" || next != 15 || dropped != 6 {
		t.Fatalf("after the drop: %q %d %d", data, next, dropped)
	}
}

func TestOutputLog_TailOnRuneBoundary(t *testing.T) {
	l := newOutputLog(1 << 10)
	_, _ = l.Write([]byte("aéb"))
	data, omitted := l.tail(2) // the last two bytes are "\xa9b": skip the half rune
	if string(data) != "b" || omitted != 3 {
		t.Fatalf("tail = %q, omitted %d", data, omitted)
	}
}

func TestProcessManager_Limits(t *testing.T) {
	tc, root := newWorkspace(t)
	pm := NewProcessManager(ProcessOptions{MaxRunning: 1, KeepFinished: 1})
	mkfifo(t, root, "never")
	c := Command{Script: "read line < never", Dir: root, Env: commandEnv(nil)}
	first, err := pm.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Start(context.Background(), c); !errors.Is(err, ErrTooManyProcesses) {
		t.Fatalf("second Start: %v, want ErrTooManyProcesses", err)
	}
	r, err := NewBash(Options{}, pm).Execute(context.Background(), BashParams{Command: "true", RunInBackground: true}, tc)
	if r = mustFail(t, r, err); !strings.Contains(r.Content, "stop one with bash_process first") {
		t.Fatalf("content %q", r.Content)
	}
	first.Stop()
	if err := first.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Finished processes beyond KeepFinished are forgotten, oldest first.
	for range 2 {
		p, err := pm.Start(context.Background(), Command{Script: "true", Dir: root, Env: commandEnv(nil)})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for _, in := range pm.List() {
		ids = append(ids, in.ID)
	}
	if strings.Join(ids, ",") != "bg_2,bg_3" {
		t.Fatalf("listed %v, want bg_2,bg_3", ids)
	}
	if _, err := pm.Get("bg_1"); !errors.Is(err, ErrUnknownProcess) {
		t.Fatalf("Get(bg_1) = %v, want ErrUnknownProcess", err)
	}
	if err := pm.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestProcessManager_CloseKillsAll(t *testing.T) {
	_, root := newWorkspace(t)
	pm := NewProcessManager(ProcessOptions{})
	fifo := mkfifo(t, root, "pid")
	p, err := pm.Start(context.Background(), Command{Script: "sleep 300 & echo $! > pid; wait", Dir: root, Env: commandEnv(nil)})
	if err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, fifo, p.Done())
	pidfd := watchPID(t, pid)
	if err := pm.Close(); err != nil {
		t.Fatal(err)
	}
	if p.Info().Status != StatusStopped {
		t.Fatalf("status %v", p.Info().Status)
	}
	assertDead(t, pid, pidfd)
	if _, err := pm.Start(context.Background(), Command{Script: "true", Dir: root}); !errors.Is(err, ErrManagerClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
	if err := pm.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
