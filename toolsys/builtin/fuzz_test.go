package builtin

import (
	"strings"
	"testing"
)

func FuzzGlobMatch(f *testing.F) {
	f.Add("**/*.go", "a/b/c.go")
	f.Add("a/**/b/**/c", "a/x/b/y/c")
	f.Add("[a-", "a")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		g, err := compileGlob(pattern)
		if err != nil {
			return
		}
		m := g.match(path)
		// A path that matches can also be descended into or is a full match;
		// "**" alone matches everything.
		if pattern == "**" && !m {
			t.Fatalf("** does not match %q", path)
		}
		if m && strings.Contains(path, "/") {
			dir := path[:strings.LastIndexByte(path, '/')]
			if !g.canDescend(dir) {
				t.Fatalf("%q matches %q but its directory %q cannot be descended", pattern, path, dir)
			}
		}
	})
}

func FuzzEditSpans(f *testing.F) {
	f.Add("a\nb\nc\n", "b", "B\nB2")
	f.Add("x x x", "x", "")
	f.Add("l1\r\nl2\r\n", "\r\n", "\n")
	f.Fuzz(func(t *testing.T, content, old, repl string) {
		if old == "" || !strings.Contains(content, old) {
			return
		}
		var spans []span
		for at := 0; ; {
			i := strings.Index(content[at:], old)
			if i < 0 {
				break
			}
			spans = append(spans, span{start: at + i, end: at + i + len(old), repl: repl})
			at += i + len(old)
		}
		got, hunks := applySpans(content, spans)
		if want := strings.ReplaceAll(content, old, repl); got != want {
			t.Fatalf("applySpans = %q, want %q", got, want)
		}
		// The hunks, applied to the old lines, give the new lines.
		oldLines, newLines := splitLinesKeep(content), splitLinesKeep(got)
		var rebuilt []string
		next := 1
		for _, h := range hunks {
			if h.oldStart < next || h.oldStart-1+len(h.old) > len(oldLines) {
				t.Fatalf("hunk %+v out of order or range (%d old lines)", h, len(oldLines))
			}
			rebuilt = append(rebuilt, oldLines[next-1:h.oldStart-1]...)
			for i, l := range h.old {
				if oldLines[h.oldStart-1+i] != l {
					t.Fatalf("hunk %+v does not match old line %d", h, h.oldStart+i)
				}
			}
			rebuilt = append(rebuilt, h.new...)
			next = h.oldStart + len(h.old)
		}
		rebuilt = append(rebuilt, oldLines[next-1:]...)
		if strings.Join(rebuilt, "") != strings.Join(newLines, "") {
			t.Fatalf("hunks rebuild %q, want %q", strings.Join(rebuilt, ""), got)
		}
	})
}
