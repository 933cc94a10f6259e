package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEditFile(t *testing.T) {
	const src = "package x\n\nfunc a() int {\n\treturn 1\n}\n\nfunc b() int {\n\treturn 1\n}\n"
	tests := []struct {
		name        string
		file        string
		p           EditFileParams
		want        string // the file afterwards
		wantErr     string
		wantStats   map[string]any
		wantRepl    int
		wantSummary string
	}{
		{name: "one match", file: src,
			p:         EditFileParams{OldString: "func a() int {\n\treturn 1", NewString: "func a() int {\n\treturn 2"},
			want:      strings.Replace(src, "func a() int {\n\treturn 1", "func a() int {\n\treturn 2", 1),
			wantStats: map[string]any{"added": 1, "removed": 1}, wantRepl: 1,
			wantSummary: "Edited f.go: 1 replacement, +1 -1 lines\n@@ -4,1 +4,1 @@\n-\treturn 1\n+\treturn 2\n"},
		{name: "zero matches", file: src, p: EditFileParams{OldString: "return 3", NewString: "return 4"},
			wantErr: "old_string not found in f.go"},
		{name: "many matches", file: src, p: EditFileParams{OldString: "return 1", NewString: "return 2"},
			wantErr: "old_string matches 2 times in f.go; add context or set replace_all"},
		{name: "replace all", file: src, p: EditFileParams{OldString: "return 1", NewString: "return 2", ReplaceAll: true},
			want:      strings.ReplaceAll(src, "return 1", "return 2"),
			wantStats: map[string]any{"added": 2, "removed": 2}, wantRepl: 2,
			wantSummary: "Edited f.go: 2 replacements, +2 -2 lines\n@@ -4,1 +4,1 @@\n-\treturn 1\n+\treturn 2\n@@ -8,1 +8,1 @@\n-\treturn 1\n+\treturn 2\n"},
		{name: "insert lines", file: "a\nb\n", p: EditFileParams{OldString: "a\n", NewString: "a\nx\ny\n"},
			want: "a\nx\ny\nb\n", wantStats: map[string]any{"added": 2, "removed": 0}, wantRepl: 1,
			wantSummary: "Edited f.go: 1 replacement, +2 -0 lines\n@@ -2,0 +2,2 @@\n+x\n+y\n"},
		{name: "delete", file: "a\nb\nc\n", p: EditFileParams{OldString: "b\n", NewString: ""},
			want: "a\nc\n", wantStats: map[string]any{"added": 0, "removed": 1}, wantRepl: 1},
		{name: "two matches on one line", file: "x x\ny\n", p: EditFileParams{OldString: "x", NewString: "z", ReplaceAll: true},
			want: "z z\ny\n", wantStats: map[string]any{"added": 1, "removed": 1}, wantRepl: 2},
		{name: "crlf file with lf old_string", file: "a\r\nb\r\nc\r\n", p: EditFileParams{OldString: "a\nb", NewString: "a\nB"},
			want: "a\r\nB\r\nc\r\n", wantStats: map[string]any{"added": 1, "removed": 1}, wantRepl: 1},
		{name: "line range", file: "1\n2\n3\n4\n", p: EditFileParams{StartLine: 2, EndLine: 3, NewString: "two\nthree"},
			want: "1\ntwo\nthree\n4\n", wantStats: map[string]any{"added": 2, "removed": 2}, wantRepl: 1,
			wantSummary: "Edited f.go: 1 replacement, +2 -2 lines\n@@ -2,2 +2,2 @@\n-2\n-3\n+two\n+three\n"},
		{name: "line range delete", file: "1\n2\n3\n", p: EditFileParams{StartLine: 1, EndLine: 2, NewString: ""},
			want: "3\n", wantStats: map[string]any{"added": 0, "removed": 2}, wantRepl: 1},
		{name: "line range last line without newline", file: "1\n2", p: EditFileParams{StartLine: 2, EndLine: 2, NewString: "two"},
			want: "1\ntwo", wantStats: map[string]any{"added": 1, "removed": 1}, wantRepl: 1},
		{name: "line range past end", file: "1\n2\n", p: EditFileParams{StartLine: 2, EndLine: 5, NewString: "x"},
			wantErr: "end_line 5 is past the end of the file (2 lines) in f.go"},
		{name: "line range without change", file: "1\n2\n", p: EditFileParams{StartLine: 1, EndLine: 1, NewString: "1"},
			wantErr: "the edit would not change f.go"},
		{name: "identical strings", file: src, p: EditFileParams{OldString: "a", NewString: "a"},
			wantErr: "old_string and new_string are identical"},
		{name: "both forms", file: src, p: EditFileParams{OldString: "a", NewString: "b", StartLine: 1, EndLine: 1},
			wantErr: "not both"},
		{name: "neither form", file: src, p: EditFileParams{NewString: "b"},
			wantErr: "give old_string to replace text, or start_line and end_line"},
		{name: "half a range", file: src, p: EditFileParams{StartLine: 2, NewString: "b"},
			wantErr: "needs both start_line and end_line"},
		{name: "reversed range", file: src, p: EditFileParams{StartLine: 3, EndLine: 2, NewString: "b"},
			wantErr: "start_line (3) is after end_line (2)"},
		{name: "replace_all with range", file: src, p: EditFileParams{StartLine: 1, EndLine: 1, NewString: "b", ReplaceAll: true},
			wantErr: "replace_all applies to old_string edits only"},
		{name: "binary", file: "a\x00b", p: EditFileParams{OldString: "a", NewString: "b"},
			wantErr: "binary file: f.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc, root := newWorkspace(t)
			writeFiles(t, root, map[string]string{"f.go": tt.file})
			tt.p.Path = "f.go"
			r, err := NewEditFile(Options{}).Execute(context.Background(), tt.p, tc)
			if tt.wantErr != "" {
				r = mustFail(t, r, err)
				if !strings.Contains(r.Content, tt.wantErr) {
					t.Fatalf("content %q does not contain %q", r.Content, tt.wantErr)
				}
				if got := readFile(t, root, "f.go"); got != tt.file {
					t.Fatalf("a failed edit changed the file to %q", got)
				}
				return
			}
			r = mustOK(t, r, err)
			if diff := cmp.Diff(tt.want, readFile(t, root, "f.go")); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStats, r.Metadata["diff_stats"]); diff != "" {
				t.Errorf("diff_stats (-want +got):\n%s", diff)
			}
			if r.Metadata["replacements"] != tt.wantRepl {
				t.Errorf("replacements = %v, want %d", r.Metadata["replacements"], tt.wantRepl)
			}
			if tt.wantSummary != "" {
				if diff := cmp.Diff(tt.wantSummary, r.Content); diff != "" {
					t.Errorf("summary (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestEditFile_MissingAndMode(t *testing.T) {
	tc, root := newWorkspace(t)
	r, err := NewEditFile(Options{}).Execute(context.Background(), EditFileParams{Path: "nope.go", OldString: "a", NewString: "b"}, tc)
	r = mustFail(t, r, err)
	if !strings.Contains(r.Content, "file not found: nope.go") {
		t.Errorf("content = %q", r.Content)
	}
	writeFiles(t, root, map[string]string{"run.sh": "echo a\n"})
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err = NewEditFile(Options{}).Execute(context.Background(), EditFileParams{Path: "run.sh", OldString: "a", NewString: "b"}, tc)
	mustOK(t, r, err)
	st, err := os.Stat(filepath.Join(root, "run.sh"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("mode after edit = %v (%v)", st.Mode().Perm(), err)
	}
}

func TestRenderHunks_Cap(t *testing.T) {
	var hunks []hunk
	for i := range 40 {
		hunks = append(hunks, hunk{oldStart: i*3 + 1, newStart: i*3 + 1, old: []string{"a\n"}, new: []string{"b\n"}})
	}
	out := renderHunks(hunks)
	if lines := strings.Count(out, "\n"); lines != maxDiffLines+1 {
		t.Errorf("%d lines, want %d", lines, maxDiffLines+1)
	}
	if !strings.HasSuffix(out, "[60 more diff lines]\n") {
		t.Errorf("summary does not end with the omitted count: %q", out[len(out)-40:])
	}
}
