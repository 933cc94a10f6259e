package builtin

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGrep(t *testing.T) {
	tc, root := newWorkspace(t)
	writeFiles(t, root, map[string]string{
		"main.go":          "package main\n// MARKER: one\nfunc main() {}\n",
		"pkg/a.go":         "package pkg\n// marker: two\n",
		"pkg/a_test.go":    "package pkg\n// MARKER three\n",
		"docs/guide.md":    "# MARKER\n",
		"docs/deep/api.md": "MARKER api\n",
		"notes.txt":        "nothing here\n",
		"bin.dat":          "MARKER\x00binary",
		".git/HEAD":        "MARKER in git\n",
		"long.txt":         strings.Repeat("x", 1000) + "MARKER\n",
	})
	tests := []struct {
		name    string
		p       GrepParams
		want    string
		wantErr string
		meta    map[string]any
	}{
		{name: "everywhere", p: GrepParams{Pattern: "MARKER"}, want: strings.Join([]string{
			"docs/deep/api.md:1:MARKER api", "docs/guide.md:1:# MARKER",
			"long.txt:1:" + strings.Repeat("x", maxGrepShown) + " [...]",
			"main.go:2:// MARKER: one", "pkg/a_test.go:2:// MARKER three"}, "\n") + "\n",
			meta: map[string]any{"matches": 5, "files": 5, "truncated": false}},
		{name: "case insensitive with include", p: GrepParams{Pattern: "marker", CaseInsensitive: true, Include: "*.go"},
			want: "main.go:2:// MARKER: one\npkg/a.go:2:// marker: two\npkg/a_test.go:2:// MARKER three\n"},
		{name: "include with directories", p: GrepParams{Pattern: "MARKER", Include: "**/*.md"},
			want: "docs/deep/api.md:1:MARKER api\ndocs/guide.md:1:# MARKER\n"},
		{name: "include relative to path", p: GrepParams{Pattern: "MARKER", Path: "docs", Include: "deep/*.md"},
			want: "docs/deep/api.md:1:MARKER api\n"},
		{name: "regexp", p: GrepParams{Pattern: `^func \w+\(`}, want: "main.go:3:func main() {}\n"},
		{name: "single file", p: GrepParams{Pattern: "package", Path: "pkg/a.go"}, want: "pkg/a.go:1:package pkg\n"},
		{name: "cap", p: GrepParams{Pattern: "package", MaxResults: 2},
			want: "main.go:1:package main\npkg/a.go:1:package pkg\n[results capped at 2 matching lines; narrow the pattern, path or include]\n",
			meta: map[string]any{"matches": 2, "files": 2, "truncated": true}},
		{name: "no match", p: GrepParams{Pattern: "ABSENT"}, want: `No matches for "ABSENT" under .`,
			meta: map[string]any{"matches": 0, "files": 0, "truncated": false}},
		{name: "bad regexp", p: GrepParams{Pattern: "a(b"}, wantErr: `invalid regular expression "a(b"`},
		{name: "bad include", p: GrepParams{Pattern: "a", Include: "[z"}, wantErr: `invalid include pattern "[z"`},
		{name: "missing path", p: GrepParams{Pattern: "a", Path: "nope"}, wantErr: "file not found: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewGrep(Options{}).Execute(context.Background(), tt.p, tc)
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
			if tt.meta != nil {
				if diff := cmp.Diff(tt.meta, r.Metadata); diff != "" {
					t.Errorf("metadata (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestGrep_DefaultCapFromOptions(t *testing.T) {
	tc, root := newWorkspace(t)
	writeFiles(t, root, map[string]string{"many.txt": strings.Repeat("hit\n", 10)})
	r, err := NewGrep(Options{GrepMaxResults: 3}).Execute(context.Background(), GrepParams{Pattern: "hit"}, tc)
	r = mustOK(t, r, err)
	if r.Metadata["matches"] != 3 || r.Metadata["truncated"] != true {
		t.Fatalf("metadata = %v", r.Metadata)
	}
}

func TestGrep_Cancelled(t *testing.T) {
	tc, root := newWorkspace(t)
	writeFiles(t, root, map[string]string{"a.txt": "x\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewGrep(Options{}).Execute(ctx, GrepParams{Pattern: "x"}, tc); err == nil {
		t.Fatal("a cancelled grep returned no error")
	}
}
