package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteFile(t *testing.T) {
	tc, root := newWorkspace(t)
	writeFiles(t, root, map[string]string{"exists.sh": "old\n", "dir/keep": ""})
	if err := os.Chmod(filepath.Join(root, "exists.sh"), 0o751); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		p        WriteFileParams
		wantMeta map[string]any
		wantMode os.FileMode
		wantErr  string
	}{
		{name: "new file in new nested dirs", p: WriteFileParams{Path: "a/b/c/new.txt", Content: "hello\n"},
			wantMeta: map[string]any{"path": "a/b/c/new.txt", "bytes": 6, "created": true}, wantMode: 0o644},
		{name: "replace keeps mode", p: WriteFileParams{Path: "exists.sh", Content: "#!/bin/sh\n"},
			wantMeta: map[string]any{"path": "exists.sh", "bytes": 10, "created": false}, wantMode: 0o751},
		{name: "empty content", p: WriteFileParams{Path: "empty", Content: ""},
			wantMeta: map[string]any{"path": "empty", "bytes": 0, "created": true}, wantMode: 0o644},
		{name: "directory", p: WriteFileParams{Path: "dir", Content: "x"}, wantErr: "dir is a directory"},
		{name: "workspace root", p: WriteFileParams{Path: ".", Content: "x"}, wantErr: "workspace root"},
		{name: "parent is a file", p: WriteFileParams{Path: "exists.sh/x", Content: "x"}, wantErr: "exists.sh/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewWriteFile(Options{}).Execute(context.Background(), tt.p, tc)
			if tt.wantErr != "" {
				r = mustFail(t, r, err)
				if !strings.Contains(r.Content, tt.wantErr) {
					t.Fatalf("content %q does not contain %q", r.Content, tt.wantErr)
				}
				return
			}
			r = mustOK(t, r, err)
			if diff := cmp.Diff(tt.wantMeta, r.Metadata); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if got := readFile(t, root, tt.p.Path); got != tt.p.Content {
				t.Errorf("content = %q, want %q", got, tt.p.Content)
			}
			st, err := os.Stat(filepath.Join(root, tt.p.Path))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != tt.wantMode {
				t.Errorf("mode = %v, want %v", st.Mode().Perm(), tt.wantMode)
			}
		})
	}
	// No temporary files are left behind.
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestWriteFile_Idempotent(t *testing.T) {
	tc, root := newWorkspace(t)
	w := NewWriteFile(Options{})
	p := WriteFileParams{Path: "x.txt", Content: "same"}
	first, err := w.Execute(context.Background(), p, tc)
	mustOK(t, first, err)
	second, err := w.Execute(context.Background(), p, tc)
	mustOK(t, second, err)
	if got := readFile(t, root, "x.txt"); got != "same" || second.Metadata["created"] != false {
		t.Fatalf("content %q, metadata %v", got, second.Metadata)
	}
}

func TestWriteFile_ThroughSymlinkInside(t *testing.T) {
	tc, root := newWorkspace(t)
	writeFiles(t, root, map[string]string{"real/target.txt": "old"})
	if err := os.Symlink("real/target.txt", filepath.Join(root, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	r, err := NewWriteFile(Options{}).Execute(context.Background(), WriteFileParams{Path: "alias.txt", Content: "new"}, tc)
	r = mustOK(t, r, err)
	if got := readFile(t, root, "real/target.txt"); got != "new" {
		t.Fatalf("target = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(root, "alias.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	if r.Metadata["path"] != "real/target.txt" {
		t.Errorf("path = %v", r.Metadata["path"])
	}
}
