package builtin

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/agcore/agcore/toolsys"
)

// maxNestedScripts bounds how deep eval and sh -c arguments are parsed again
// to show deny rules the commands inside.
const maxNestedScripts = 4

// fdTarget is the target of a file-descriptor duplication (2>&1, >&-).
var fdTarget = regexp.MustCompile(`^(?:[0-9]+-?|-)$`)

// evalCommands run their arguments, or a file, as shell code; the value says
// so in an Opaque reason.
var evalCommands = map[string]string{"eval": "eval", "source": "source", ".": "source (.)"}

// shells run the argument of -c as shell code.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true}

// transparentPrefixes run the rest of their arguments as a command; they are
// looked through to find an eval or a shell.
var transparentPrefixes = map[string]bool{"command": true, "builtin": true, "exec": true, "nohup": true}

// scriptSubjects splits a bash script into the subjects permission rules are
// matched against: one per simple command, found in lists, pipelines, && and
// || chains, { } blocks, if and while clauses, each being its words joined by
// single spaces after quote removal (assignments in front included).
//
// Anything whose effect the words do not show makes the result Opaque, so
// that no allow rule vouches for the script: a syntax error, a command or
// process substitution, a parameter, arithmetic or tilde expansion, a
// subshell, a function definition, a here-document, a redirection to or from
// a file (other than /dev/null and descriptor duplications), eval, source
// and sh -c, any construct not listed above (for, case, [[ ]], ...), and a
// script with no command at all.
//
// Commands found inside such constructs are still listed, for deny rules;
// words that are not literal appear in them as written.
func scriptSubjects(script string) toolsys.Subjects {
	var s splitter
	s.split(script, 0)
	if len(s.parts) == 0 {
		s.flag("no command")
	}
	return toolsys.Subjects{Parts: s.parts, Opaque: s.opaque}
}

// splitter collects the subjects of a script and the first reason it is
// opaque.
type splitter struct {
	parts  []string
	opaque string
}

func (s *splitter) flag(reason string) {
	if s.opaque == "" {
		s.opaque = reason
	}
}

// split parses script (depth levels of eval or sh -c deep) and walks it.
func (s *splitter) split(script string, depth int) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		s.flag(fmt.Sprintf("the script does not parse (%v)", err))
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case nil: // the end of a node's children
		case *syntax.File, *syntax.Stmt, *syntax.Comment, *syntax.Word, *syntax.Lit, *syntax.SglQuoted,
			*syntax.BinaryCmd, *syntax.Block, *syntax.IfClause, *syntax.WhileClause, *syntax.TimeClause:
		case *syntax.Assign:
			switch {
			case n.Name == nil || n.Naked:
				s.flag("a declaration")
			case n.Index != nil || n.Array != nil:
				s.flag("an array assignment")
			}
		case *syntax.DblQuoted:
			if n.Dollar {
				s.flag(`a $"..." string`)
			}
		case *syntax.CallExpr:
			s.call(script, n, depth)
		case *syntax.Redirect:
			s.redirect(n)
		case *syntax.CmdSubst:
			s.flag("command substitution")
		case *syntax.ProcSubst:
			s.flag("process substitution")
		case *syntax.ParamExp:
			s.flag("parameter expansion")
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
			s.flag("arithmetic")
		case *syntax.Subshell:
			s.flag("a subshell")
		case *syntax.FuncDecl:
			s.flag("a function definition")
		default:
			s.flag(fmt.Sprintf("shell syntax the rules cannot check (%s)", nodeName(n)))
		}
		return true
	})
}

// nodeName names a node type for a reason ("ForClause").
func nodeName(n syntax.Node) string {
	name := fmt.Sprintf("%T", n)
	return name[strings.LastIndexByte(name, '.')+1:]
}

// call adds a simple command's subject, and parses the script of an eval or
// sh -c again so that deny rules see the commands inside.
func (s *splitter) call(script string, c *syntax.CallExpr, depth int) {
	words := make([]string, 0, len(c.Assigns)+len(c.Args))
	for _, a := range c.Assigns {
		if a.Name == nil || a.Naked || a.Array != nil || a.Index != nil {
			continue // flagged by the walk
		}
		op := "="
		if a.Append {
			op = "+="
		}
		words = append(words, a.Name.Value+op+s.word(script, a.Value))
	}
	args := make([]string, len(c.Args))
	for i, w := range c.Args {
		args[i] = s.word(script, w)
	}
	if words = append(words, args...); len(words) > 0 {
		s.parts = append(s.parts, strings.Join(words, " "))
	}

	for len(args) > 1 && transparentPrefixes[args[0]] {
		args = args[1:]
	}
	switch {
	case len(args) == 0:
	case evalCommands[args[0]] != "":
		s.flag(evalCommands[args[0]])
		if args[0] == "eval" && depth < maxNestedScripts {
			s.split(strings.Join(args[1:], " "), depth+1)
		}
	case shells[path.Base(args[0])]:
		for i, a := range args[1:] {
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
				s.flag(args[0] + " -c")
				if i+2 < len(args) && depth < maxNestedScripts {
					s.split(args[i+2], depth+1)
				}
				break
			}
		}
	}
}

// word returns w after quote removal when it is literal, and as written
// otherwise (the walk flags what makes it not literal). An unquoted '~' at
// the start of the word or after '=' or ':' is tilde expansion (bash expands
// it there also in arguments that look like assignments); HEAD~1 is literal.
func (s *splitter) word(script string, w *syntax.Word) string {
	if w == nil {
		return ""
	}
	literal := true
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") || strings.Contains(p.Value, "=~") || strings.Contains(p.Value, ":~") {
				s.flag("tilde expansion")
				literal = false
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					literal = false
				}
			}
		default:
			literal = false
		}
	}
	if braced := (&syntax.Word{Parts: slices.Clone(w.Parts)}); syntax.SplitBraces(braced) {
		s.flag("brace expansion")
		literal = false
	}
	if literal {
		// With no environment and no directory reader, expansion of a
		// literal word is quote removal only: one field, never globbed.
		if f, err := expand.Fields(nil, w); err == nil && len(f) == 1 {
			return f[0]
		}
		s.flag("a word that does not expand to one field")
	}
	return sourceOf(script, w)
}

// sourceOf returns n as written in script.
func sourceOf(script string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(script) || start > end {
		return ""
	}
	return script[start:end]
}

// redirect flags a here-document and a redirection to or from a file; a
// descriptor duplication and /dev/null are harmless.
func (s *splitter) redirect(r *syntax.Redirect) {
	target := ""
	if r.Word != nil {
		target = r.Word.Lit()
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		s.flag("a here-document")
	case syntax.WordHdoc:
		// a here-string: the word itself is checked by the walk
	case syntax.DplIn, syntax.DplOut:
		if !fdTarget.MatchString(target) {
			s.flag("a redirection to a file")
		}
	default:
		if target != "/dev/null" || r.N != nil && !fdTarget.MatchString(r.N.Value) {
			s.flag("a redirection to a file")
		}
	}
}
