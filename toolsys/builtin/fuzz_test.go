package builtin

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
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

func FuzzScriptSubjects(f *testing.F) {
	f.Add("git status; rm -rf ~", "git status;git log --oneline;ls -la")
	f.Add("git $(rm -rf ~) `x` <(y) <<EOF\nz\nEOF", "a b\nc")
	f.Add(`eval "eval 'eval x'"`, `x;"y z";'w`)
	f.Add("git \"unbalanced", ";;\n;")
	f.Fuzz(func(t *testing.T, script, commands string) {
		// Any script: no panic, and the same answer twice.
		got := scriptSubjects(script)
		if again := scriptSubjects(script); !slices.Equal(got.Parts, again.Parts) || got.Opaque != again.Opaque {
			t.Fatalf("scriptSubjects(%q) is not deterministic: %+v then %+v", script, got, again)
		}
		if len(got.Parts) == 0 && got.Opaque == "" {
			t.Fatalf("scriptSubjects(%q) has no part and is not opaque", script)
		}

		// N literal commands separated by ';' or newlines: N subjects, each
		// its words after quote removal.
		var lines, want []string
		for c := range strings.FieldsFuncSeq(commands, func(r rune) bool { return r == ';' || r == '\n' }) {
			words := []string{"run"}
			for w := range strings.FieldsSeq(c) {
				w = strings.Map(func(r rune) rune {
					if r == '\'' || r == 0 || r == utf8.RuneError {
						return -1
					}
					return r
				}, w)
				words = append(words, w)
			}
			quoted := make([]string, len(words))
			for i, w := range words {
				quoted[i] = "'" + w + "'"
			}
			lines = append(lines, strings.Join(quoted, " "))
			want = append(want, strings.Join(words, " "))
		}
		if len(lines) == 0 {
			return
		}
		sep := "; "
		if len(lines)%2 == 0 {
			sep = "\n"
		}
		script = strings.Join(lines, sep)
		got = scriptSubjects(script)
		if got.Opaque != "" || !slices.Equal(got.Parts, want) {
			t.Fatalf("scriptSubjects(%q) = %q (opaque %q), want the %d commands %q", script, got.Parts, got.Opaque, len(want), want)
		}
	})
}
