//go:build unix

package toolsys

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWorkspace_OpenRegular(t *testing.T) {
	w, base := newTestWorkspace(t)
	root := w.Root()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(root, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Link(filepath.Join(base, "outside", "secret.txt"), filepath.Join(root, "hard")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		policy  FilePolicy
		want    string // content; "" means refused
		wantErr error
		msg     string
	}{
		{name: "dir/f.txt", want: "x"},
		{name: "inlink/f.txt", want: "x"},
		{name: "fifo", wantErr: ErrNotRegular, msg: "fifo is a named pipe, not a regular file"},
		{name: "sock", wantErr: ErrNotRegular, msg: "sock is a socket, not a regular file"},
		{name: "dir", wantErr: ErrNotRegular, msg: "dir is a directory, not a regular file"},
		{name: "hard", wantErr: ErrHardlinked, msg: "hard has 2 hard links"},
		{name: "hard", policy: FilePolicy{AllowHardlinks: true}, want: "x"},
		{name: "missing", wantErr: fs.ErrNotExist},
		{name: "out/secret.txt", wantErr: os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Names come from Name; a path it refuses goes to the root as it is.
			name := tt.name
			if n, err := w.Name(tt.name); err == nil {
				name = n
			}
			f, fi, err := w.OpenRegular(name, tt.policy)
			if tt.want != "" {
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				b, err := io.ReadAll(f)
				if err != nil || string(b) != tt.want || fi.Size() != int64(len(tt.want)) {
					t.Fatalf("read %q, %v; size %d", b, err, fi.Size())
				}
				return
			}
			if err == nil {
				f.Close()
				t.Fatal("opened")
			}
			if tt.name == "out/secret.txt" {
				// The root refuses the escape; which error it gives is its own.
				if errors.Is(err, ErrNotRegular) || errors.Is(err, ErrHardlinked) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err %q does not contain %q", err, tt.msg)
			}
		})
	}
}

func TestWorkspace_NameErrors(t *testing.T) {
	w, _ := newTestWorkspace(t)
	tests := map[string]string{
		"out/secret.txt":    `path is outside the workspace: symlink out -> ../outside leaves the root`,
		"absout/secret.txt": `symlink absout -> ` + filepath.Join(filepath.Dir(w.Root()), "outside") + ` leaves the root`,
		"dangling/x":        `symlink dangling -> ` + filepath.Join(w.Root(), "nowhere") + ` is dangling (nowhere does not exist)`,
		"loop":              `more than 40 symlinks followed`,
		"../x":              `path is outside the workspace`,
	}
	for p, want := range tests {
		_, err := w.Name(p)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"`+p+`"`) {
			t.Errorf("Name(%q) = %v, want an error naming the path and %q", p, err, want)
		}
	}
}

func TestWorkspace_WalkDir(t *testing.T) {
	w, _ := newTestWorkspace(t)
	if err := syscall.Mkfifo(filepath.Join(w.Root(), "dir", "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := w.WalkDir(".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		got = append(got, name+" "+d.Type().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{". d---------", "absin L---------", "absout L---------", "dangling L---------",
		"dir d---------", "dir/f.txt ----------", "dir/fifo p---------", "inlink L---------",
		"loop L---------", "out L---------", "outfile L---------", "up L---------"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
	// A named pipe where a directory was listed fails at once.
	if _, err := (walkFS{w.FS()}).ReadDir("dir/fifo"); err == nil {
		t.Error("ReadDir of a named pipe succeeded")
	}
}

// TestWorkspace_PinnedRoot moves the workspace directory away and puts a
// symlink to a directory outside in its place: the workspace keeps reading
// the directory it opened.
func TestWorkspace_PinnedRoot(t *testing.T) {
	w, base := newTestWorkspace(t)
	if err := os.Rename(w.Root(), filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("outside", w.Root()); err != nil {
		t.Fatal(err)
	}
	b, err := w.FS().ReadFile("dir/f.txt")
	if err != nil || string(b) != "x" {
		t.Fatalf("read %q, %v", b, err)
	}
	if _, err := w.FS().Stat("secret.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the outside directory is visible: %v", err)
	}
}

func TestWorkspace_Close(t *testing.T) {
	w, _ := newTestWorkspace(t)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.OpenRegular("dir/f.txt", FilePolicy{}); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("OpenRegular after Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// BenchmarkWorkspace_Open compares opening a file through the workspace's
// shared root, through a root opened for the call, and by path after
// resolving symlinks (no confinement at open time), the way file tools
// opened files before they went through a root.
func BenchmarkWorkspace_Open(b *testing.B) {
	w, _ := newTestWorkspace(b)
	const path = "inlink/f.txt"
	read := func(b *testing.B, w *Workspace) {
		name, err := w.Name(path)
		if err != nil {
			b.Fatal(err)
		}
		f, _, err := w.OpenRegular(name, FilePolicy{})
		if err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
	}
	b.Run("shared-root", func(b *testing.B) {
		for b.Loop() {
			read(b, w)
		}
	})
	b.Run("root-per-call", func(b *testing.B) {
		for b.Loop() {
			r, err := os.OpenRoot(w.Root())
			if err != nil {
				b.Fatal(err)
			}
			read(b, &Workspace{root: w.root, given: w.given, fsys: r})
			_ = r.Close()
		}
	})
	b.Run("path-baseline", func(b *testing.B) {
		for b.Loop() {
			p, err := filepath.EvalSymlinks(filepath.Join(w.Root(), path))
			if err != nil {
				b.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Stat(); err != nil {
				b.Fatal(err)
			}
			_ = f.Close()
		}
	})
}

// BenchmarkWorkspace_WalkDir compares walking a tree of 1,000 files through
// the root with filepath.WalkDir by path.
func BenchmarkWorkspace_WalkDir(b *testing.B) {
	w, _ := newTestWorkspace(b)
	for i := range 1000 {
		p := filepath.Join(w.Root(), "tree", fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%04d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	count := func(n *int) fs.WalkDirFunc {
		return func(_ string, _ fs.DirEntry, err error) error { *n++; return err }
	}
	b.Run("root", func(b *testing.B) {
		for b.Loop() {
			n := 0
			if err := w.WalkDir("tree", count(&n)); err != nil || n != 1051 {
				b.Fatalf("%d entries, %v", n, err)
			}
		}
	})
	b.Run("path-baseline", func(b *testing.B) {
		for b.Loop() {
			n := 0
			if err := filepath.WalkDir(filepath.Join(w.Root(), "tree"), count(&n)); err != nil || n != 1051 {
				b.Fatalf("%d entries, %v", n, err)
			}
		}
	})
}
