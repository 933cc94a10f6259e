package builtin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/toolsys"
)

// fileToolCalls returns a call of every file tool on a path.
func fileToolCalls() map[string]func(ctx context.Context, p string, tc *toolsys.Context) (toolsys.Result, error) {
	return map[string]func(ctx context.Context, p string, tc *toolsys.Context) (toolsys.Result, error){
		"read_file": func(ctx context.Context, p string, tc *toolsys.Context) (toolsys.Result, error) {
			return NewReadFile(Options{}).Execute(ctx, ReadFileParams{Path: p}, tc)
		},
		"write_file": func(ctx context.Context, p string, tc *toolsys.Context) (toolsys.Result, error) {
			return NewWriteFile(Options{}).Execute(ctx, WriteFileParams{Path: p, Content: "pwned"}, tc)
		},
		"edit_file": func(ctx context.Context, p string, tc *toolsys.Context) (toolsys.Result, error) {
			return NewEditFile(Options{}).Execute(ctx, EditFileParams{Path: p, OldString: "secret", NewString: "pwned"}, tc)
		},
		"list_dir": func(ctx context.Context, p string, tc *toolsys.Context) (toolsys.Result, error) {
			return NewListDir(Options{}).Execute(ctx, ListDirParams{Path: p}, tc)
		},
		"glob": func(ctx context.Context, p string, tc *toolsys.Context) (toolsys.Result, error) {
			return NewGlob(Options{}).Execute(ctx, GlobParams{Pattern: "**", Path: p}, tc)
		},
		"grep": func(ctx context.Context, p string, tc *toolsys.Context) (toolsys.Result, error) {
			return NewGrep(Options{}).Execute(ctx, GrepParams{Pattern: "secret", Path: p}, tc)
		},
	}
}

func TestFileTools_RefuseEscapes(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "ws")
	outside := filepath.Join(parent, "ws2") // shares the root's name as a prefix
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFiles(t, outside, map[string]string{"secret.txt": "secret\n"})
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "file-link")); err != nil {
		t.Fatal(err)
	}
	ws, err := toolsys.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	tc := &toolsys.Context{Workspace: ws}
	paths := map[string]string{
		"dot-dot":            "../ws2/secret.txt",
		"dot-dot dir":        "..",
		"absolute outside":   filepath.Join(outside, "secret.txt"),
		"prefix sibling":     outside,
		"symlinked dir":      "link/secret.txt",
		"symlink to dir":     "link",
		"symlink to file":    "file-link",
		"deep dot-dot":       "a/b/../../../ws2",
		"absolute root path": "/",
	}
	for tool, call := range fileToolCalls() {
		for name, p := range paths {
			t.Run(tool+"/"+name, func(t *testing.T) {
				r, err := call(context.Background(), p, tc)
				r = mustFail(t, r, err)
				if !strings.Contains(r.Content, "outside the workspace") {
					t.Errorf("content %q does not say the path is outside the workspace", r.Content)
				}
			})
		}
		t.Run(tool+"/no workspace", func(t *testing.T) {
			r, err := call(context.Background(), "x", &toolsys.Context{})
			r = mustFail(t, r, err)
			if r.Content != "no workspace configured" {
				t.Errorf("content = %q", r.Content)
			}
		})
	}
	if got := readFile(t, outside, "secret.txt"); got != "secret\n" {
		t.Fatalf("file outside the workspace changed: %q", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("files appeared outside the workspace: %v", entries)
	}
}

func TestEachLine(t *testing.T) {
	type line struct {
		N    int
		Text string
		Cut  bool
	}
	tests := []struct {
		name  string
		in    string
		max   int
		stop  int
		lines []line
	}{
		{name: "empty", in: "", max: 10},
		{name: "one newline", in: "\n", max: 10, lines: []line{{1, "", false}}},
		{name: "no final newline", in: "a\nb", max: 10, lines: []line{{1, "a", false}, {2, "b", false}}},
		{name: "crlf", in: "a\r\nb\r\n", max: 10, lines: []line{{1, "a", false}, {2, "b", false}}},
		{name: "cut", in: "abcdef\ng\n", max: 3, lines: []line{{1, "abc", true}, {2, "g", false}}},
		{name: "exact fit", in: "abc\n", max: 3, lines: []line{{1, "abc", false}}},
		{name: "cut on rune boundary", in: "aé\n", max: 2, lines: []line{{1, "a", true}}},
		{name: "longer than the reader buffer", in: strings.Repeat("z", 100<<10) + "\ny\n", max: 5,
			lines: []line{{1, "zzzzz", true}, {2, "y", false}}},
		{name: "stop early", in: "a\nb\nc\n", max: 5, stop: 2, lines: []line{{1, "a", false}, {2, "b", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []line
			err := eachLine(bytes.NewReader([]byte(tt.in)), tt.max, func(n int, l []byte, cut bool) bool {
				got = append(got, line{n, string(l), cut})
				return tt.stop == 0 || n < tt.stop
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.lines) {
				t.Fatalf("got %v, want %v", got, tt.lines)
			}
			for i := range got {
				if got[i] != tt.lines[i] {
					t.Errorf("line %d = %+v, want %+v", i, got[i], tt.lines[i])
				}
			}
		})
	}
}
