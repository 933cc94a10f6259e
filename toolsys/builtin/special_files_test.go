//go:build linux

package builtin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agcore/agcore/toolsys"
)

// callWithGuard runs call and returns its result, or fails the test when it
// has not returned within guard; release is then called to unblock it (a
// blocked open of a FIFO returns once a writer opens the other end).
func callWithGuard(t *testing.T, what string, call func() (toolsys.Result, error), release func()) toolsys.Result {
	t.Helper()
	type outcome struct {
		r   toolsys.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := call()
		done <- outcome{r, err}
	}()
	timer := time.NewTimer(guard)
	defer timer.Stop()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("%s: %v", what, o.err)
		}
		return o.r
	case <-timer.C:
		release()
		t.Fatalf("%s blocked for %v", what, guard)
	}
	return toolsys.Result{}
}

// openWriter opens the FIFO at path for writing without blocking when no
// reader waits, and closes it at once; it unblocks a reader stuck in open.
func openWriter(path string) func() {
	return func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	}
}

// specialFiles creates a FIFO, a unix socket and, when the process may,
// a character device (the one /dev/zero is) in root. It returns their
// names with the word an error about each must use.
func specialFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	mkfifo(t, root, "fifo")
	l, err := net.Listen("unix", filepath.Join(root, "sock"))
	if err != nil {
		t.Fatalf("listen on a unix socket: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	kinds := map[string]string{"fifo": "named pipe", "sock": "socket"}
	err = unix.Mknod(filepath.Join(root, "zero"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5)))
	switch {
	case err == nil:
		kinds["zero"] = "device"
	case errors.Is(err, unix.EPERM):
		t.Log("cannot create a device node here (needs CAP_MKNOD); the device cases are skipped")
	default:
		t.Fatalf("mknod: %v", err)
	}
	return kinds
}

func TestFileTools_RefuseSpecialFiles(t *testing.T) {
	tc, root := newWorkspace(t)
	kinds := specialFiles(t, root)
	tools := map[string]func(p string) (toolsys.Result, error){
		"read_file": func(p string) (toolsys.Result, error) {
			return NewReadFile(Options{}).Execute(context.Background(), ReadFileParams{Path: p}, tc)
		},
		"edit_file": func(p string) (toolsys.Result, error) {
			return NewEditFile(Options{}).Execute(context.Background(), EditFileParams{Path: p, OldString: "a", NewString: "b"}, tc)
		},
		"write_file": func(p string) (toolsys.Result, error) {
			return NewWriteFile(Options{}).Execute(context.Background(), WriteFileParams{Path: p, Content: "x"}, tc)
		},
		"grep": func(p string) (toolsys.Result, error) {
			return NewGrep(Options{}).Execute(context.Background(), GrepParams{Pattern: "x", Path: p}, tc)
		},
	}
	for tool, call := range tools {
		for name, kind := range kinds {
			t.Run(tool+"/"+name, func(t *testing.T) {
				r := callWithGuard(t, tool+" on "+name, func() (toolsys.Result, error) { return call(name) },
					openWriter(filepath.Join(root, name)))
				if !r.IsError {
					t.Fatalf("%s on a %s succeeded: %q", tool, kind, r.Content)
				}
				if want := name + " is a " + kind + ", not a regular file"; !strings.Contains(r.Content, want) {
					t.Errorf("content %q does not contain %q", r.Content, want)
				}
			})
		}
	}
	// Each special file is still what it was: write_file did not replace it.
	for name := range kinds {
		if st, err := os.Lstat(filepath.Join(root, name)); err != nil || st.Mode().IsRegular() {
			t.Errorf("%s: %v, %v", name, st, err)
		}
	}
}

func TestFileTools_WalksSkipSpecialFiles(t *testing.T) {
	tc, root := newWorkspace(t)
	writeFiles(t, root, map[string]string{"a.txt": "x marks\n"})
	kinds := specialFiles(t, root)
	release := openWriter(filepath.Join(root, "fifo"))

	ctx := context.Background()
	r := callOK(t, "grep", func() (toolsys.Result, error) {
		return NewGrep(Options{}).Execute(ctx, GrepParams{Pattern: "x"}, tc)
	}, release)
	if r.Content != "a.txt:1:x marks\n" {
		t.Errorf("grep = %q", r.Content)
	}
	r = callOK(t, "glob", func() (toolsys.Result, error) {
		return NewGlob(Options{}).Execute(ctx, GlobParams{Pattern: "*"}, tc)
	}, release)
	for name := range kinds {
		if !strings.Contains(r.Content, name+"\n") {
			t.Errorf("glob does not list %s: %q", name, r.Content)
		}
	}
	r = callOK(t, "list_dir", func() (toolsys.Result, error) {
		return NewListDir(Options{}).Execute(ctx, ListDirParams{}, tc)
	}, release)
	if !strings.Contains(r.Content, "fifo\n") || !strings.Contains(r.Content, "a.txt\n") {
		t.Errorf("list_dir = %q", r.Content)
	}
}

// callOK is callWithGuard for a call that must succeed.
func callOK(t *testing.T, what string, call func() (toolsys.Result, error), release func()) toolsys.Result {
	t.Helper()
	r := callWithGuard(t, what, call, release)
	if r.IsError {
		t.Fatalf("%s: %s", what, r.Content)
	}
	return r
}

// TestReadFile_RegularFileSwappedForFIFO exchanges a regular file and a FIFO
// in a loop while read_file and grep read the name: every call returns at
// once, with the regular file's content or a refusal, never blocked in an
// open of the FIFO.
func TestReadFile_RegularFileSwappedForFIFO(t *testing.T) {
	tc, root := newWorkspace(t)
	writeFiles(t, root, map[string]string{"f": "regular\n"})
	fifo := mkfifo(t, root, ".fifo")
	f := filepath.Join(root, "f")

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, f, unix.AT_FDCWD, fifo, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
		}
	})
	// Whichever name holds the FIFO, opening both for writing releases a
	// blocked reader.
	release := func() { openWriter(f)(); openWriter(fifo)() }
	refused := 0
	for i := range *fileRaceIterations {
		r := callWithGuard(t, fmt.Sprintf("read_file, call %d", i), func() (toolsys.Result, error) {
			return NewReadFile(Options{}).Execute(context.Background(), ReadFileParams{Path: "f"}, tc)
		}, release)
		switch {
		case !r.IsError && r.Content == "     1\tregular\n":
		case r.IsError && strings.Contains(r.Content, "not a regular file"):
			refused++
		default:
			stop.Store(true)
			wg.Wait()
			t.Fatalf("call %d: read_file = %q (error %v)", i, r.Content, r.IsError)
		}
		callWithGuard(t, fmt.Sprintf("grep, call %d", i), func() (toolsys.Result, error) {
			return NewGrep(Options{}).Execute(context.Background(), GrepParams{Pattern: "regular"}, tc)
		}, release)
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d calls refused the FIFO", refused)
}

func TestFileTools_Hardlinks(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	writeFiles(t, outside, map[string]string{"secret.txt": "secret value\n"})
	writeFiles(t, root, map[string]string{"plain.txt": "plain\n"})
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Skipf("cannot make a hard link here: %v", err)
	}
	ws, err := toolsys.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tc := &toolsys.Context{Workspace: ws}
	ctx := context.Background()

	t.Run("refused by default", func(t *testing.T) {
		opts := Options{}
		calls := map[string]func() (toolsys.Result, error){
			"read_file": func() (toolsys.Result, error) {
				return NewReadFile(opts).Execute(ctx, ReadFileParams{Path: "link.txt"}, tc)
			},
			"edit_file": func() (toolsys.Result, error) {
				return NewEditFile(opts).Execute(ctx, EditFileParams{Path: "link.txt", OldString: "secret", NewString: "changed"}, tc)
			},
			"write_file": func() (toolsys.Result, error) {
				return NewWriteFile(opts).Execute(ctx, WriteFileParams{Path: "link.txt", Content: "changed"}, tc)
			},
			"grep file": func() (toolsys.Result, error) {
				return NewGrep(opts).Execute(ctx, GrepParams{Pattern: "secret", Path: "link.txt"}, tc)
			},
		}
		for name, call := range calls {
			r, err := call()
			r = mustFail(t, r, err)
			if strings.Contains(r.Content, "secret value") {
				t.Errorf("%s showed the linked content: %q", name, r.Content)
			}
			if !strings.Contains(r.Content, "link.txt has 2 hard links") || !strings.Contains(r.Content, "AllowHardlinks") {
				t.Errorf("%s: content %q does not name the links and the option", name, r.Content)
			}
		}
		r, err := NewGrep(opts).Execute(ctx, GrepParams{Pattern: "secret|plain"}, tc)
		r = mustOK(t, r, err)
		want := "plain.txt:1:plain\n[1 file with more than one hard link was not searched (the AllowHardlinks option allows them)]\n"
		if r.Content != want || r.Metadata["skipped_hardlinked"] != 1 {
			t.Errorf("grep over the workspace = %q (%v), want only plain.txt and a note", r.Content, r.Metadata)
		}
		if got := readFile(t, outside, "secret.txt"); got != "secret value\n" {
			t.Errorf("the outside file changed: %q", got)
		}
		if got := readFile(t, root, "link.txt"); got != "secret value\n" {
			t.Errorf("the link changed: %q", got)
		}
	})

	t.Run("allowed by the option", func(t *testing.T) {
		opts := Options{AllowHardlinks: true}
		r, err := NewReadFile(opts).Execute(ctx, ReadFileParams{Path: "link.txt"}, tc)
		r = mustOK(t, r, err)
		if r.Content != "     1\tsecret value\n" {
			t.Errorf("read_file = %q", r.Content)
		}
		r, err = NewGrep(opts).Execute(ctx, GrepParams{Pattern: "secret"}, tc)
		r = mustOK(t, r, err)
		if r.Content != "link.txt:1:secret value\n" {
			t.Errorf("grep = %q", r.Content)
		}
		// A write replaces the workspace's name; the other name keeps its content.
		r, err = NewEditFile(opts).Execute(ctx, EditFileParams{Path: "link.txt", OldString: "secret", NewString: "changed"}, tc)
		mustOK(t, r, err)
		if got := readFile(t, root, "link.txt"); got != "changed value\n" {
			t.Errorf("link.txt = %q", got)
		}
		if got := readFile(t, outside, "secret.txt"); got != "secret value\n" {
			t.Errorf("the outside file changed: %q", got)
		}
	})
}
