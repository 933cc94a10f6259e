package toolsys

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newTestWorkspace builds, in a temporary directory:
//
//	ws/            the workspace
//	ws/dir/f.txt
//	ws/inlink -> ws/dir          (symlinked dir inside)
//	ws/out -> ../outside         (symlinked dir leading outside)
//	ws/outfile -> ../outside/secret.txt
//	ws/dangling -> ws/nowhere
//	ws/absin -> /abs/ws/dir      (absolute symlink inside)
//	ws/absout -> /abs/outside    (absolute symlink outside)
//	ws/up -> dir/../..           (relative symlink above the root)
//	ws/loop -> loop
//	ws2/x          a sibling sharing the prefix
//	outside/secret.txt
func newTestWorkspace(t testing.TB) (*Workspace, string) {
	t.Helper()
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	for _, d := range []string{filepath.Join(ws, "dir"), filepath.Join(base, "ws2"), filepath.Join(base, "outside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(ws, "dir", "f.txt"), filepath.Join(base, "ws2", "x"), filepath.Join(base, "outside", "secret.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"inlink":   filepath.Join(ws, "dir"),
		"out":      filepath.Join("..", "outside"),
		"outfile":  filepath.Join("..", "outside", "secret.txt"),
		"dangling": filepath.Join(ws, "nowhere"),
		"absin":    filepath.Join(ws, "dir"),
		"absout":   filepath.Join(base, "outside"),
		"up":       filepath.Join("dir", "..", ".."),
		"loop":     "loop",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	w, err := NewWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w, base
}

func TestWorkspace_Resolve(t *testing.T) {
	w, _ := newTestWorkspace(t)
	root := w.Root()
	realBase := filepath.Dir(root)
	tests := []struct {
		name, path string
		want       string // relative to root; "" means rejected
		outside    bool   // rejected with ErrOutsideWorkspace
	}{
		{"relative file", "dir/f.txt", "dir/f.txt", false},
		{"root itself", ".", ".", false},
		{"not yet existing", "new/sub/file.go", "new/sub/file.go", false},
		{"absolute inside", filepath.Join(root, "dir", "f.txt"), "dir/f.txt", false},
		{"inner dotdot", "dir/../dir/f.txt", "dir/f.txt", false},
		{"symlink inside", "inlink/f.txt", "dir/f.txt", false},
		{"dotdot escape", "../outside/secret.txt", "", true},
		{"deep dotdot escape", "dir/../../outside", "", true},
		{"absolute outside", filepath.Join(realBase, "outside", "secret.txt"), "", true},
		{"absolute system path", "/etc/passwd", "", true},
		{"prefix confusion", filepath.Join(realBase, "ws2", "x"), "", true},
		{"prefix confusion via dotdot", "../ws2/x", "", true},
		{"symlinked file outside", "outfile", "", true},
		{"symlinked parent dir outside", "out/secret.txt", "", true},
		{"new file under symlinked dir outside", "out/new.txt", "", true},
		{"absolute symlink inside", "absin/f.txt", "dir/f.txt", false},
		{"absolute symlink outside", "absout/secret.txt", "", true},
		{"relative symlink above the root", "up/ws2/x", "", true},
		{"symlink loop", "loop/x", "", false},
		{"dangling symlink", "dangling", "", false},
		{"under dangling symlink", "dangling/x", "", false},
		{"NUL byte", "dir/f.txt\x00.png", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.Resolve(tt.path)
			if tt.want != "" {
				if err != nil {
					t.Fatalf("Resolve(%q) = %v", tt.path, err)
				}
				if rel := w.Rel(got); rel != tt.want {
					t.Errorf("Resolve(%q) = %s (rel %s), want %s", tt.path, got, rel, tt.want)
				}
				return
			}
			var pe *PathError
			if err == nil || !errors.As(err, &pe) || pe.Path != tt.path {
				t.Fatalf("Resolve(%q) = %q, %v; want a *PathError", tt.path, got, err)
			}
			if errors.Is(err, ErrOutsideWorkspace) != tt.outside {
				t.Errorf("Resolve(%q) err = %v, ErrOutsideWorkspace = %v, want %v", tt.path, err, !tt.outside, tt.outside)
			}
		})
	}
}

func TestNewWorkspace_Errors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"", filepath.Join(dir, "missing"), file} {
		if _, err := NewWorkspace(root); err == nil {
			t.Errorf("NewWorkspace(%q) succeeded", root)
		}
	}
}

// underRoot reports whether p is root or below it.
func underRoot(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// FuzzWorkspaceResolve checks, for any path, that what the workspace
// accepts lies under the root, both as Name and Resolve compute it and as
// the kernel sees the file the root opens (/proc/self/fd), and that the
// root refuses to open anything outside even for paths Name never saw.
func FuzzWorkspaceResolve(f *testing.F) {
	for _, s := range []string{"dir/f.txt", "../outside", "out/secret.txt", "inlink/../../ws2", "/etc", "a/./b/../../..", "dangling/x", "ws2", "dir\x00", "absin/f.txt", "absout/secret.txt", "loop/x"} {
		f.Add(s)
	}
	w, _ := newTestWorkspace(f)
	root := w.Root()
	f.Fuzz(func(t *testing.T, p string) {
		// Whatever Name accepts or not, opening p through the root never
		// reaches outside.
		if !filepath.IsAbs(p) {
			checkOpenedInside(t, w, p)
		}
		name, err := w.Name(p)
		if err != nil {
			return
		}
		if name != "." && !filepath.IsLocal(name) {
			t.Fatalf("Name(%q) = %q, not local", p, name)
		}
		got, err := w.Resolve(p)
		if err != nil || got != filepath.Join(root, name) || !underRoot(root, got) {
			t.Fatalf("Resolve(%q) = %q, %v; Name %q", p, got, err, name)
		}
		// Resolved again by the OS, an existing accepted path still lies
		// under the root.
		if again, err := filepath.EvalSymlinks(got); err == nil && !underRoot(root, again) {
			t.Fatalf("the OS resolves %q to %q, outside %q", got, again, root)
		}
		if again, err := w.Name(name); err != nil || again != name {
			t.Fatalf("Name is not stable: %q -> %q, %v", name, again, err)
		}
		checkOpenedInside(t, w, name)
	})
}

// checkOpenedInside opens name through the workspace's root and, when that
// succeeds, fails the test unless the kernel places the open file under the
// root.
func checkOpenedInside(t *testing.T, w *Workspace, name string) {
	t.Helper()
	f, err := w.FS().OpenFile(name, readFlags, 0)
	if err != nil {
		return
	}
	defer f.Close()
	where, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return // no /proc here
	}
	if !underRoot(w.Root(), where) {
		t.Fatalf("opening %q through the root reached %q, outside %q", name, where, w.Root())
	}
}
