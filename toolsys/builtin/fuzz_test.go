package builtin

import (
	"path"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agcore/agcore/toolsys"
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
		if again := scriptSubjects(script); !slices.Equal(got.Parts, again.Parts) || got.Opaque != again.Opaque || got.Unresolved != again.Unresolved {
			t.Fatalf("scriptSubjects(%q) is not deterministic: %+v then %+v", script, got, again)
		}
		if len(got.Parts) == 0 && got.Opaque == "" {
			t.Fatalf("scriptSubjects(%q) has no part and is not opaque", script)
		}

		// N literal commands separated by ';' or newlines: a subject for
		// each, its words after quote removal, a repeated one listed once.
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
			if subject := strings.Join(words, " "); !slices.Contains(want, subject) {
				want = append(want, subject)
			}
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
		if got.Opaque != "" || got.Unresolved != "" || !slices.Equal(got.Parts, want) {
			t.Fatalf("scriptSubjects(%q) = %q (opaque %q, unresolved %q), want the commands %q", script, got.Parts, got.Opaque, got.Unresolved, want)
		}
	})
}

// FuzzResolveEchoAllowed checks the resolver against the syntax tree: a
// script that an allow rule bash(echo *) lets run unasked runs nothing but
// echo. Every simple command in the tree, substitutions and nested blocks
// included, must be a literal echo (or a system path to it) with no
// assignment in front, and the script must define no function.
func FuzzResolveEchoAllowed(f *testing.F) {
	for _, seed := range []string{
		"echo hi", "echo hi; echo there", "echo a | echo b && echo c", "{ echo a; } || (echo b)",
		"if echo a; then echo b; fi", "/bin/echo hi", "ec''ho 'a b'", `e\cho x`, "$'echo' x",
		"echo hi; rm -f v", "echo $(rm -f v)", "command echo x", "E=1 echo x", "echo x | bash",
		"eval echo x", "echo() { rm -f v; }; echo", "bash -c 'echo x'", "echo x > f", "$(echo echo) x",
		"a=echo; $a x", "echo <(rm x)", "time echo x", "for x in a; do echo $x; done", "echo {a,b}",
		"echo *", "xargs echo", "coproc echo x", "echo x <<< y", "echo x <<EOF\ny\nEOF",
	} {
		f.Add(seed)
	}
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Allow: []string{"bash(echo *)"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, script string) {
		subjects := scriptSubjects(script)
		req := toolsys.Request{Tool: "bash", Permission: toolsys.PermExecute, Subject: script, Subjects: subjects}
		if perms.Check(t.Context(), req) != nil {
			return // asked (and refused, there being no approver)
		}
		file, err := syntax.NewParser().Parse(strings.NewReader(script), "")
		if err != nil {
			t.Fatalf("%q does not parse (%v) but is allowed as %+v", script, err, subjects)
		}
		syntax.Walk(file, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.CallExpr:
				if len(n.Assigns) > 0 || len(n.Args) == 0 || !isEcho(n.Args[0]) {
					t.Fatalf("%q runs %q but is allowed by bash(echo *) as %+v", script, sourceOf(script, n), subjects)
				}
			case *syntax.FuncDecl, *syntax.DeclClause:
				t.Fatalf("%q declares %q but is allowed by bash(echo *) as %+v", script, sourceOf(script, n), subjects)
			}
			return true
		})
	})
}

// isEcho reports whether a command name is literally echo, by name or by
// its path in a system directory.
func isEcho(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	fields, err := expand.Fields(&expand.Config{}, w)
	if err != nil || len(fields) != 1 {
		return false
	}
	name := fields[0]
	return name == "echo" || path.Base(name) == "echo" && slices.Contains(systemDirs, path.Dir(name))
}
