package builtin

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFile(t *testing.T) {
	tc, root := newWorkspace(t)
	long := strings.Repeat("é", maxReadLine) // 2 bytes per rune
	writeFiles(t, root, map[string]string{
		"five.txt":   "one\ntwo\nthree\nfour\nfive\n",
		"crlf.txt":   "a\r\nb\r\n",
		"nonl.txt":   "x\ny",
		"empty.txt":  "",
		"bin.dat":    "text\x00more",
		"long.txt":   long + "\nnext\n",
		"dir/a.txt":  "a\n",
		"big.txt":    strings.Repeat("0123456789\n", 100),
		"unicode.md": "héllo\n",
	})
	tests := []struct {
		name    string
		opts    Options
		p       ReadFileParams
		want    string
		wantErr string
		meta    map[string]any
	}{
		{name: "whole file", p: ReadFileParams{Path: "five.txt"},
			want: "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive\n",
			meta: map[string]any{"path": "five.txt", "lines": 5, "total_lines": 5, "truncated": false}},
		{name: "offset and limit", p: ReadFileParams{Path: "five.txt", Offset: 2, Limit: 2},
			want: "     2\ttwo\n     3\tthree\n[showing lines 2-3 of 5; continue with offset=4]\n",
			meta: map[string]any{"path": "five.txt", "lines": 2, "total_lines": 5, "truncated": true}},
		{name: "offset to the end", p: ReadFileParams{Path: "five.txt", Offset: 5},
			want: "     5\tfive\n",
			meta: map[string]any{"path": "five.txt", "lines": 1, "total_lines": 5, "truncated": false}},
		{name: "crlf endings stripped", p: ReadFileParams{Path: "crlf.txt"}, want: "     1\ta\n     2\tb\n"},
		{name: "last line without newline", p: ReadFileParams{Path: "nonl.txt"}, want: "     1\tx\n     2\ty\n"},
		{name: "empty", p: ReadFileParams{Path: "empty.txt"}, want: "empty.txt is empty",
			meta: map[string]any{"path": "empty.txt", "lines": 0, "total_lines": 0, "truncated": false}},
		{name: "nested path", p: ReadFileParams{Path: "./dir/../dir/a.txt"}, want: "     1\ta\n"},
		{name: "long line cut", p: ReadFileParams{Path: "long.txt"},
			want: "     1\t" + long[:maxReadLine] + " [line cut at 2000 bytes]\n     2\tnext\n"},
		{name: "byte cap", opts: Options{MaxReadBytes: 40}, p: ReadFileParams{Path: "big.txt"},
			want: "     1\t0123456789\n     2\t0123456789\n[showing lines 1-2 of 100; continue with offset=3]\n",
			meta: map[string]any{"path": "big.txt", "lines": 2, "total_lines": 100, "truncated": true}},
		{name: "binary", p: ReadFileParams{Path: "bin.dat"}, wantErr: "binary file: bin.dat"},
		{name: "missing", p: ReadFileParams{Path: "nope.txt"}, wantErr: "file not found: nope.txt"},
		{name: "directory", p: ReadFileParams{Path: "dir"}, wantErr: "dir is a directory"},
		{name: "offset past end", p: ReadFileParams{Path: "five.txt", Offset: 9}, wantErr: "offset 9 is past the end of five.txt (5 lines)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReadFile(tt.opts).Execute(context.Background(), tt.p, tc)
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
