package builtin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// guard bounds how long a test waits for something that should happen at
// once; reaching it fails the test instead of hanging it.
const guard = 15 * time.Second

// mkfifo creates a named pipe in dir and returns its path.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// readPID reads a pid a command writes into the fifo at path. It fails the
// test if the command ends (done is closed) or the guard passes first.
func readPID(t *testing.T, path string, done <-chan struct{}) int {
	t.Helper()
	type result struct {
		pid int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// O_RDWR keeps the open from blocking, so this goroutine ends with
		// the test even if no writer ever comes.
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := f.SetReadDeadline(time.Now().Add(guard)); err != nil {
			ch <- result{err: err}
			return
		}
		var buf [32]byte
		n, err := f.Read(buf[:])
		if err != nil {
			ch <- result{err: err}
			return
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
		ch <- result{pid: pid, err: err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("reading the pid: %v", r.err)
		}
		return r.pid
	case <-done:
		// A command may write the pid and end at once, before the reader
		// has handed it over: the pid is then in the FIFO already. The
		// reader's deadline bounds this wait when it is not.
		r := <-ch
		if r.err != nil {
			t.Fatalf("the command ended before reporting its child's pid: %v", r.err)
		}
		return r.pid
	}
}

// watchPID opens a pidfd on pid, to learn later when it exits.
func watchPID(t *testing.T, pid int) int {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	return fd
}

// assertDead fails the test unless the process behind pidfd has exited (or
// does so within the guard: SIGKILL delivery is asynchronous) and
// kill(pid, 0) finds no live process.
func assertDead(t *testing.T, pid, pidfd int) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(guard/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd: %v", err)
		}
		if n == 0 {
			t.Fatalf("process %d is still alive after %v", pid, guard)
		}
		break
	}
	// Exited: either reaped (ESRCH) or a zombie waiting for its new parent.
	if err := syscall.Kill(pid, 0); err == nil && !isZombie(pid) {
		t.Fatalf("process %d is still alive", pid)
	} else if err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill(%d, 0): %v", pid, err)
	}
}

// isZombie reports whether pid is a zombie (exited, not yet reaped).
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // gone meanwhile
	}
	// The state follows the command name, which is in parentheses.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// waitOutput waits until the process's output contains want.
func waitOutput(t *testing.T, p *Process, want string) {
	t.Helper()
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	for {
		changed := p.out.wait()
		data, _, _ := p.out.since(0, true)
		if strings.Contains(string(data), want) {
			return
		}
		select {
		case <-changed:
		case <-p.Done():
			data, _, _ := p.out.since(0, true)
			if !strings.Contains(string(data), want) {
				t.Fatalf("process ended without printing %q; output %q", want, data)
			}
			return
		case <-deadline.C:
			t.Fatalf("no %q in the output after %v", want, guard)
		}
	}
}

// openGate writes a line into the fifo at path once a command opens it for
// reading, releasing the command.
func openGate(t *testing.T, path string) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // blocks until the reader opens
		if err != nil {
			errc <- err
			return
		}
		_, err = f.WriteString("go\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		errc <- err
	}()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(guard):
		t.Fatalf("nobody opened %s for reading within %v", path, guard)
	}
}
