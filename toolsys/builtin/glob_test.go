package builtin

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGlobPattern_Match(t *testing.T) {
	tests := []struct {
		pattern string
		path    string
		want    bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "dir/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "a/b/c.txt", false},
		{"src/**", "src", true},
		{"src/**", "src/a/b", true},
		{"src/**", "srcx/a", false},
		{"src/**/test_*.py", "src/test_a.py", true},
		{"src/**/test_*.py", "src/x/y/test_a.py", true},
		{"src/**/test_*.py", "lib/test_a.py", false},
		{"a/**/b/**/c", "a/b/c", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/c", false},
		{"**", "anything/at/all", true},
		{"./docs/*.md", "docs/a.md", true},
		{"docs//*.md", "docs/a.md", true},
		{"[ab]?.txt", "bx.txt", true},
		{"[ab]?.txt", "cx.txt", false},
		{`\*.txt`, "*.txt", true},
		{`\*.txt`, "a.txt", false},
	}
	for _, tt := range tests {
		g, err := compileGlob(tt.pattern)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", tt.pattern, err)
		}
		if got := g.match(tt.path); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func TestGlobPattern_CanDescend(t *testing.T) {
	tests := []struct {
		pattern, dir string
		want         bool
	}{
		{"src/*.go", "src", true},
		{"src/*.go", "lib", false},
		{"src/*.go", "src/x", false},
		{"**/*.go", "deep/er", true},
		{"a/**/z", "a/b/c", true},
		{"*.go", "dir", false},
	}
	for _, tt := range tests {
		g, err := compileGlob(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.canDescend(tt.dir); got != tt.want {
			t.Errorf("%q canDescend(%q) = %v, want %v", tt.pattern, tt.dir, got, tt.want)
		}
	}
}

func TestCompileGlob_Errors(t *testing.T) {
	for _, p := range []string{"", "  ", "/etc/*", "../*", "a/../../b", "[", "a/[z-", "./", "."} {
		if _, err := compileGlob(p); err == nil {
			t.Errorf("compileGlob(%q) succeeded", p)
		}
	}
}

func TestGlob(t *testing.T) {
	tc, root := newWorkspace(t)
	writeFiles(t, root, map[string]string{
		"main.go":           "",
		"a/b/deep.go":       "",
		"a/b/deep_test.go":  "",
		"a/readme.md":       "",
		"docs/x.md":         "",
		"docs/sub/y.md":     "",
		".git/hooks/pre.go": "",
		"a.go/inner.txt":    "",
	})
	tests := []struct {
		name    string
		opts    Options
		p       GlobParams
		want    string
		wantErr string
	}{
		{name: "recursive", p: GlobParams{Pattern: "**/*.go"}, want: "a.go/\na/b/deep.go\na/b/deep_test.go\nmain.go\n"},
		{name: "top level only", p: GlobParams{Pattern: "*.go"}, want: "a.go/\nmain.go\n"},
		{name: "under a path", p: GlobParams{Pattern: "**/*.md", Path: "docs"}, want: "docs/sub/y.md\ndocs/x.md\n"},
		{name: "segment", p: GlobParams{Pattern: "a/*/*_test.go"}, want: "a/b/deep_test.go\n"},
		{name: "none", p: GlobParams{Pattern: "**/*.rs"}, want: `No paths match "**/*.rs" under .`},
		{name: "capped", opts: Options{GlobMaxResults: 2}, p: GlobParams{Pattern: "**/*.md"},
			want: "a/readme.md\ndocs/sub/y.md\n[results capped at 2; narrow the pattern or the path]\n"},
		{name: "bad pattern", p: GlobParams{Pattern: "[x"}, wantErr: `invalid pattern "[x"`},
		{name: "path is a file", p: GlobParams{Pattern: "*", Path: "main.go"}, wantErr: "main.go is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewGlob(tt.opts).Execute(context.Background(), tt.p, tc)
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
