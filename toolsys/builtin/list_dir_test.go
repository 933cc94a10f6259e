package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestListDir(t *testing.T) {
	tc, root := newWorkspace(t)
	writeFiles(t, root, map[string]string{
		"b.txt":          "",
		"a/x.go":         "",
		"a/sub/y.go":     "",
		".git/config":    "",
		"Z-upper":        "",
		"empty/.keep":    "",
		"c/with space.m": "",
	})
	if err := os.Remove(filepath.Join(root, "empty/.keep")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for link, target := range map[string]string{"in-link": "a/sub", "file-link": "b.txt", "out-link": outside, "dangling": "nope"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		p       ListDirParams
		want    string
		wantErr string
	}{
		{name: "root", p: ListDirParams{}, want: strings.Join([]string{
			".git/", "Z-upper", "a/", "b.txt", "c/", "dangling@ -> (broken link)", "empty/",
			"file-link@ -> b.txt", "in-link@ -> a/sub/", "out-link@ -> (outside the workspace)"}, "\n") + "\n"},
		{name: "subdir", p: ListDirParams{Path: "a"}, want: "a/sub/\na/x.go\n"},
		{name: "recursive", p: ListDirParams{Path: "a", Recursive: true}, want: "a/sub/\na/sub/y.go\na/x.go\n"},
		{name: "recursive does not enter .git or links", p: ListDirParams{Recursive: true, MaxEntries: 100}, want: strings.Join([]string{
			".git/", "Z-upper", "a/", "a/sub/", "a/sub/y.go", "a/x.go", "b.txt", "c/", "c/with space.m",
			"dangling@ -> (broken link)", "empty/", "file-link@ -> b.txt", "in-link@ -> a/sub/",
			"out-link@ -> (outside the workspace)"}, "\n") + "\n"},
		{name: "capped", p: ListDirParams{MaxEntries: 2}, want: ".git/\nZ-upper\n[listing stopped at 2 entries; list a subdirectory or raise max_entries]\n"},
		{name: "empty", p: ListDirParams{Path: "empty"}, want: "empty/ is empty"},
		{name: "through an inside link", p: ListDirParams{Path: "in-link"}, want: "a/sub/y.go\n"},
		{name: "a file", p: ListDirParams{Path: "b.txt"}, wantErr: "b.txt is not a directory"},
		{name: "missing", p: ListDirParams{Path: "nope"}, wantErr: "file not found: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewListDir(Options{}).Execute(context.Background(), tt.p, tc)
			if tt.wantErr != "" {
				r = mustFail(t, r, err)
				if !strings.Contains(r.Content, tt.wantErr) {
					t.Fatalf("content %q does not contain %q", r.Content, tt.wantErr)
				}
				return
			}
			r = mustOK(t, r, err)
			if diff := cmp.Diff(tt.want, r.Content); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}
