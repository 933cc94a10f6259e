//go:build linux

package builtin

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agcore/agcore/toolsys"
)

var fileRaceIterations = flag.Int("file-race-iterations", 1000,
	"rounds of the six file tools TestFileTools_SymlinkSwapRace runs against a swapping directory")

// Markers that only the files outside the workspace hold: a result that
// shows one of them has read outside.
const (
	outsideSecret = "OUTSIDE-SECRET"
	outsideOnly   = "only-outside.txt"
	editedMarker  = "EDITED-THROUGH-LINK"
)

// TestFileTools_SymlinkSwapRace calls every file tool through a registry on
// paths below ws/d while another goroutine atomically exchanges ws/d, a real
// directory, with a symlink to a directory outside the workspace. A tool that
// checks a path and then opens it by name can be sent outside between the
// two steps; tools that open through the workspace root cannot. The test
// counts escapes: a result that shows outside content or names, a file
// created or changed outside.
func TestFileTools_SymlinkSwapRace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	writeFiles(t, root, map[string]string{"d/target.txt": "inside\n", "d/other.txt": "plain\n"})
	writeFiles(t, outside, map[string]string{"target.txt": outsideSecret + "\n", outsideOnly: outsideSecret + "\n"})
	before := snapshotTree(t, outside)
	// ws/.swap starts as the symlink; each exchange trades it with ws/d.
	if err := os.Symlink("../outside", filepath.Join(root, ".swap")); err != nil {
		t.Fatal(err)
	}
	ws, err := toolsys.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsys.NewRegistry(toolsys.Config{})
	for _, tool := range fileTools(Options{}) {
		reg.MustRegister(tool)
	}
	calls := []struct{ tool, args string }{
		{"read_file", `{"path":"d/target.txt"}`},
		{"write_file", `{"path":"d/written.txt","content":"written\n"}`},
		{"edit_file", `{"path":"d/target.txt","old_string":"SECRET","new_string":"` + editedMarker + `"}`},
		{"list_dir", `{"path":"d"}`},
		{"glob", `{"pattern":"*","path":"d"}`},
		{"grep", `{"pattern":"SECRET|inside","path":"d"}`},
	}

	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		d, swap := filepath.Join(root, "d"), filepath.Join(root, ".swap")
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
			swaps.Add(1)
		}
	})

	tc := &toolsys.Context{Workspace: ws}
	var escapes []string
	for i := range *fileRaceIterations {
		for _, c := range calls {
			r, err := reg.Call(context.Background(), c.tool, json.RawMessage(c.args), tc)
			if err != nil {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("round %d: %s: %v", i, c.tool, err)
			}
			for _, m := range []string{outsideSecret, outsideOnly, editedMarker} {
				if strings.Contains(r.Content, m) {
					escapes = append(escapes, fmt.Sprintf("round %d: %s %s returned %q", i, c.tool, c.args, r.Content))
					break
				}
			}
		}
	}
	stop.Store(true)
	wg.Wait()

	after := snapshotTree(t, outside)
	for name, content := range after {
		if old, ok := before[name]; !ok {
			escapes = append(escapes, fmt.Sprintf("%s was created outside the workspace", name))
		} else if old != content {
			escapes = append(escapes, fmt.Sprintf("%s outside the workspace changed to %q", name, content))
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			escapes = append(escapes, fmt.Sprintf("%s was removed outside the workspace", name))
		}
	}
	t.Logf("%d rounds of %d calls, %d exchanges", *fileRaceIterations, len(calls), swaps.Load())
	if len(escapes) > 0 {
		t.Fatalf("%d escapes from the workspace:\n%s", len(escapes), strings.Join(escapes, "\n"))
	}
}

// fileTools returns the six file tools, bridged.
func fileTools(opts Options) []toolsys.Tool {
	return []toolsys.Tool{
		toolsys.Bridge[ReadFileParams](NewReadFile(opts)),
		toolsys.Bridge[WriteFileParams](NewWriteFile(opts)),
		toolsys.Bridge[EditFileParams](NewEditFile(opts)),
		toolsys.Bridge[ListDirParams](NewListDir(opts)),
		toolsys.Bridge[GlobParams](NewGlob(opts)),
		toolsys.Bridge[GrepParams](NewGrep(opts)),
	}
}

// snapshotTree returns every entry under dir, by relative path: a regular
// file's content, a symlink's target, "(dir)" or the type of anything else.
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			entries[rel] = string(b)
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			entries[rel] = "-> " + target
		case d.IsDir():
			entries[rel] = "(dir)"
		default:
			entries[rel] = d.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
