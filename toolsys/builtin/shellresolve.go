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

// maxNestedScripts bounds how deep the resolver parses shell code found in
// shell code (bash -c, eval, a here-string fed to a shell, a trap action, a
// git alias); code nested deeper is unresolved.
const maxNestedScripts = 4

// maxCommands bounds the commands one script resolves to; a script with
// more is unresolved.
const maxCommands = 1000

// fdTarget is the target of a file-descriptor duplication (2>&1, >&-).
var fdTarget = regexp.MustCompile(`^(?:[0-9]+-?|-)$`)

// systemDirs are where a program named by its bare name is found with the
// PATH the bash tool gives its commands: /bin/rm is rm.
var systemDirs = []string{"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}

// inputKind says what a command's standard input is, as far as the script
// shows.
type inputKind int

const (
	// inputEmpty is no input: the bash tool runs scripts with standard
	// input on /dev/null.
	inputEmpty inputKind = iota
	// inputText is known text: a here-string or a here-document without
	// expansions.
	inputText
	// inputUnknown is a pipe, a file, a descriptor, or text with expansions.
	inputUnknown
)

// input is a command's standard input.
type input struct {
	kind inputKind
	text string // the text, for inputText
	from string // where it comes from, for inputUnknown ("a pipe")
}

// scope is where a statement runs: the source its positions refer to, the
// shell language, how deep in nested shell code, and its standard input.
type scope struct {
	src   string
	lang  syntax.LangVariant
	depth int
	stdin input
}

// word is a shell word as the resolver sees it.
type word struct {
	text    string // after quote removal when literal, as written otherwise
	literal bool   // no expansion: text is exactly the argument
	glob    bool   // holds unquoted pattern characters, replaced by file names
}

// literalWords returns texts as literal words.
func literalWords(texts ...string) []word {
	ws := make([]word, len(texts))
	for i, t := range texts {
		ws[i] = word{text: t, literal: true}
	}
	return ws
}

// wordTexts returns the words' texts.
func wordTexts(ws []word) []string {
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.text
	}
	return texts
}

// joinWords joins the words' texts with single spaces.
func joinWords(ws []word) string { return strings.Join(wordTexts(ws), " ") }

// resolver turns a bash script into the commands it would run (see
// scriptSubjects): it walks the syntax tree, follows wrappers and nested
// shell code, and records what it cannot follow.
type resolver struct {
	parts      []string
	seen       map[string]bool
	opaque     string // the first reason allow rules cannot vouch
	unresolved string // the first reason a command cannot be named
	commands   int
	// evalVars is set when the script evaluates variable values as
	// arithmetic (where an array subscript runs command substitutions).
	evalVars bool
	// latent is set when a literal holds text that reads as a command
	// substitution: a value such evaluation could run.
	latent bool
}

func newResolver() *resolver { return &resolver{seen: map[string]bool{}} }

// add records a subject once.
func (r *resolver) add(part string) {
	if !r.seen[part] {
		r.seen[part] = true
		r.parts = append(r.parts, part)
	}
}

// markOpaque records the first reason allow rules cannot vouch for the
// script.
func (r *resolver) markOpaque(reason string) {
	if r.opaque == "" {
		r.opaque = reason
	}
}

// markUnresolved records the first reason the script may run a command the
// resolver cannot name; such a script is opaque too.
func (r *resolver) markUnresolved(reason string) {
	if r.unresolved == "" {
		r.unresolved = reason
	}
	r.markOpaque(reason)
}

// subjects returns what the resolver found.
func (r *resolver) subjects() toolsys.Subjects {
	if r.evalVars && r.latent {
		r.markUnresolved("a quoted $(...) may run when a variable holding it is evaluated as arithmetic")
	}
	if len(r.parts) == 0 {
		r.markOpaque("no command")
	}
	return toolsys.Subjects{Parts: r.parts, Opaque: r.opaque, Unresolved: r.unresolved}
}

// script parses src as shell code of lang, depth levels of nesting deep,
// and walks it with stdin as its standard input.
func (r *resolver) script(src string, lang syntax.LangVariant, depth int, stdin input) {
	if depth > maxNestedScripts {
		r.markUnresolved(fmt.Sprintf("shell code nested more than %d levels deep", maxNestedScripts))
		return
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
	if err != nil {
		r.markUnresolved(fmt.Sprintf("the script does not parse (%v)", err))
		return
	}
	r.stmts(f.Stmts, scope{src: src, lang: lang, depth: depth, stdin: stdin})
}

// nested walks src, shell code that a program found at sc runs with a
// shell (a git pager, an editor, a trap action), one level deeper. What it
// reads from its input is unknown: a pager reads a pipe.
func (r *resolver) nested(src string, sc scope) {
	r.script(src, syntax.LangBash, sc.depth+1, input{kind: inputUnknown, from: "the program that runs it"})
}

func (r *resolver) stmts(list []*syntax.Stmt, sc scope) {
	for _, s := range list {
		r.stmt(s, sc)
	}
}

// stmt walks one statement: its redirections decide its standard input.
func (r *resolver) stmt(s *syntax.Stmt, sc scope) {
	for _, rd := range s.Redirs {
		sc.stdin = r.redirect(rd, sc)
	}
	switch c := s.Cmd.(type) {
	case nil: // redirections alone
	case *syntax.CallExpr:
		r.call(c, sc)
	case *syntax.BinaryCmd:
		r.stmt(c.X, sc)
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			sc.stdin = input{kind: inputUnknown, from: "a pipe"}
		}
		r.stmt(c.Y, sc)
	case *syntax.Block:
		r.stmts(c.Stmts, sc)
	case *syntax.Subshell:
		r.stmts(c.Stmts, sc)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			r.stmts(ic.Cond, sc)
			r.stmts(ic.Then, sc)
		}
	case *syntax.WhileClause:
		r.stmts(c.Cond, sc)
		r.stmts(c.Do, sc)
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			r.assignName(l.Name.Value, word{text: "the loop's words"}, sc)
			for _, w := range l.Items {
				r.word(w, sc)
			}
		case *syntax.CStyleLoop:
			for _, e := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
				r.arith(e, sc)
			}
		}
		r.stmts(c.Do, sc)
	case *syntax.CaseClause:
		r.word(c.Word, sc)
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				r.word(p, sc)
			}
			r.stmts(item.Stmts, sc)
		}
	case *syntax.FuncDecl:
		r.markOpaque("the script defines a function, which may stand for a command of the same name")
		r.stmt(c.Body, sc)
	case *syntax.ArithmCmd:
		r.arith(c.X, sc)
	case *syntax.LetClause:
		for _, e := range c.Exprs {
			r.arith(e, sc)
		}
	case *syntax.TestClause:
		r.test(c.X, sc)
	case *syntax.DeclClause:
		r.decl(c, sc)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			r.stmt(c.Stmt, sc)
		}
	case *syntax.CoprocClause:
		if c.Name != nil {
			r.word(c.Name, sc)
		}
		sc.stdin = input{kind: inputUnknown, from: "a coprocess pipe"}
		r.stmt(c.Stmt, sc)
	default:
		r.markUnresolved(fmt.Sprintf("shell syntax the rules cannot check (%s)", nodeName(c)))
	}
}

// nodeName names a node type for a reason ("TestDecl").
func nodeName(n syntax.Node) string {
	name := fmt.Sprintf("%T", n)
	return name[strings.LastIndexByte(name, '.')+1:]
}

// redirect walks a redirection and returns the statement's standard input
// after it. A redirection to or from a file (other than /dev/null) or a
// read-write one is opaque: its effect is not a command's words.
func (r *resolver) redirect(rd *syntax.Redirect, sc scope) input {
	stdin := sc.stdin
	toStdin := rd.N == nil || rd.N.Value == "0"
	switch rd.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		r.markOpaque("a here-document, input that rules do not match")
		body := r.heredoc(rd, sc)
		if toStdin {
			stdin = body
		}
		return stdin
	case syntax.WordHdoc:
		w := r.word(rd.Word, sc)
		if toStdin {
			stdin = input{kind: inputUnknown, from: "a here-string with expansions"}
			if w.literal {
				stdin = input{kind: inputText, text: w.text + "\n"}
			}
		}
		return stdin
	}
	w := r.word(rd.Word, sc)
	switch rd.Op {
	case syntax.DplIn, syntax.DplOut:
		if !w.literal || !fdTarget.MatchString(w.text) {
			r.markOpaque("a redirection to a file")
		}
	case syntax.RdrIn:
		if !w.literal || w.text != "/dev/null" {
			r.markOpaque("a redirection from a file")
		}
	default:
		if !w.literal || w.text != "/dev/null" || rd.N != nil && !fdTarget.MatchString(rd.N.Value) {
			r.markOpaque("a redirection to a file")
		}
	}
	if !toStdin {
		return stdin
	}
	switch {
	case rd.Op == syntax.DplIn && w.literal && w.text == "-": // <&- closes it
		stdin = input{kind: inputEmpty}
	case rd.Op == syntax.DplIn && w.literal && fdTarget.MatchString(w.text):
		stdin = input{kind: inputUnknown, from: "descriptor " + w.text}
	case rd.Op == syntax.RdrIn && w.literal && w.text == "/dev/null":
		stdin = input{kind: inputEmpty}
	case rd.Op == syntax.RdrIn || rd.Op == syntax.RdrInOut || rd.Op == syntax.DplIn:
		stdin = input{kind: inputUnknown, from: "the file " + w.text}
	}
	return stdin
}

// heredoc walks a here-document's body and returns it as input: known text
// when it has no expansion.
func (r *resolver) heredoc(rd *syntax.Redirect, sc scope) input {
	if rd.Hdoc == nil {
		return input{kind: inputEmpty}
	}
	if rd.Word.Lit() == "" || slices.ContainsFunc(rd.Word.Parts, func(p syntax.WordPart) bool {
		lit, ok := p.(*syntax.Lit)
		return !ok || strings.Contains(lit.Value, `\`)
	}) {
		// A quoted delimiter: the body is taken as written.
		var sb strings.Builder
		for _, p := range rd.Hdoc.Parts {
			if lit, ok := p.(*syntax.Lit); ok {
				sb.WriteString(lit.Value)
			}
		}
		r.noteLatent(sb.String())
		return input{kind: inputText, text: sb.String()}
	}
	literal := true
	for _, p := range rd.Hdoc.Parts {
		if _, ok := p.(*syntax.Lit); !ok {
			literal = false
			r.part(p, sc)
		}
	}
	if literal {
		if text, err := expand.Document(&expand.Config{}, rd.Hdoc); err == nil {
			r.noteLatent(text)
			return input{kind: inputText, text: text}
		}
	}
	return input{kind: inputUnknown, from: "a here-document with expansions"}
}

// noteLatent notes literal text that reads as a command substitution.
func (r *resolver) noteLatent(text string) {
	if strings.Contains(text, "$(") || strings.Contains(text, "`") {
		r.latent = true
	}
}

// call resolves a simple command: its assignments, then the command.
func (r *resolver) call(c *syntax.CallExpr, sc scope) {
	var prefix []string
	for _, a := range c.Assigns {
		prefix = append(prefix, r.assign(a, sc))
	}
	if len(c.Args) == 0 {
		if len(c.Assigns) > 0 {
			r.markOpaque("the script assigns shell variables, which later commands may read")
		}
		return
	}
	ws := make([]word, len(c.Args))
	for i, w := range c.Args {
		ws[i] = r.word(w, sc)
	}
	r.command(ws, prefix, sc)
}

// assign walks an assignment and returns it as written after quote removal
// ("X=1").
func (r *resolver) assign(a *syntax.Assign, sc scope) string {
	if a.Name == nil {
		if a.Value != nil {
			return r.word(a.Value, sc).text
		}
		return ""
	}
	if a.Index != nil {
		r.arith(a.Index, sc)
		r.markOpaque("an array assignment")
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				r.arith(e.Index, sc)
			}
			if e.Value != nil {
				r.word(e.Value, sc)
			}
		}
		r.markOpaque("an array assignment")
	}
	if a.Naked {
		return a.Name.Value
	}
	op := "="
	if a.Append {
		op = "+="
	}
	value := word{literal: true}
	switch {
	case a.Value != nil:
		value = r.word(a.Value, sc)
	case a.Array != nil:
		value = word{text: sourceOf(sc.src, a.Array)}
	}
	r.assignName(a.Name.Value, value, sc)
	return a.Name.Value + op + value.text
}

// word walks w (the command and process substitutions inside run) and
// returns it: after quote removal when it is literal, as written
// otherwise. An unquoted '~' at its start or after '=' or ':' is tilde
// expansion; HEAD~1 is literal.
func (r *resolver) word(w *syntax.Word, sc scope) word {
	if w == nil || len(w.Parts) == 0 {
		return word{literal: true}
	}
	literal, glob := true, false
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(p.Value, "~") || strings.Contains(p.Value, "=~") || strings.Contains(p.Value, ":~") {
				literal = false
			}
			glob = glob || hasPattern(p.Value)
			r.noteLatent(p.Value)
		case *syntax.SglQuoted:
			r.noteLatent(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				literal = false
			}
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					r.noteLatent(lit.Value)
					continue
				}
				literal = false
				r.part(q, sc)
			}
		default:
			literal = false
			r.part(p, sc)
		}
	}
	if braced := (&syntax.Word{Parts: slices.Clone(w.Parts)}); syntax.SplitBraces(braced) &&
		slices.ContainsFunc(braced.Parts, func(p syntax.WordPart) bool { _, ok := p.(*syntax.BraceExp); return ok }) {
		literal = false // brace expansion: {a,b} and {1..3}, not {} or {a}
	}
	if literal {
		// With no environment and no directory reader, expanding a
		// literal word is quote removal only: one field, never globbed. A
		// fresh Config each time: a nil one makes the package share (and
		// write) one, which races between calls.
		if f, err := expand.Fields(&expand.Config{}, w); err == nil && len(f) == 1 {
			return word{text: f[0], literal: true, glob: glob}
		}
	}
	return word{text: sourceOf(sc.src, w), glob: glob}
}

// hasPattern reports whether an unquoted literal holds glob pattern
// characters ('*', '?', or '[' closed by ']'), which bash replaces by the
// names of matching files.
func hasPattern(lit string) bool {
	for i := 0; i < len(lit); i++ {
		switch lit[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.IndexByte(lit[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// part walks a word part that is not a literal: the commands of a
// substitution run; a parameter expansion may evaluate arithmetic.
func (r *resolver) part(p syntax.WordPart, sc scope) {
	switch p := p.(type) {
	case *syntax.CmdSubst:
		inner := sc
		inner.stdin = sc.stdin
		r.stmts(p.Stmts, inner)
	case *syntax.ProcSubst:
		inner := sc
		if p.Op == syntax.CmdOut { // >(cmd) reads what is written to it
			inner.stdin = input{kind: inputUnknown, from: "a process substitution"}
		}
		r.stmts(p.Stmts, inner)
	case *syntax.ArithmExp:
		r.arith(p.X, sc)
	case *syntax.ParamExp:
		r.param(p, sc)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			r.part(q, sc)
		}
	case *syntax.Lit, *syntax.SglQuoted, *syntax.ExtGlob, *syntax.BraceExp:
	default:
		r.markUnresolved(fmt.Sprintf("shell syntax the rules cannot check (%s)", nodeName(p)))
	}
}

// param walks a parameter expansion: subscripts and slices are arithmetic,
// an indirect expansion (${!x}) evaluates a variable's value as a name.
func (r *resolver) param(p *syntax.ParamExp, sc scope) {
	if p.Excl {
		r.evalVars = true
	}
	if p.Index != nil {
		r.arith(p.Index, sc)
	}
	if p.Slice != nil {
		r.arith(p.Slice.Offset, sc)
		r.arith(p.Slice.Length, sc)
	}
	if p.Repl != nil {
		r.word(p.Repl.Orig, sc)
		r.word(p.Repl.With, sc)
	}
	if p.Exp != nil {
		r.word(p.Exp.Word, sc)
	}
	if p.NestedParam != nil {
		r.part(p.NestedParam, sc)
	}
}

// arith walks an arithmetic expression. Bash evaluates the value of a
// variable named in one as an expression in turn, and an array subscript in
// that value runs its command substitutions; the output of a command
// substitution in one is evaluated the same way, so it is unresolved.
func (r *resolver) arith(e syntax.ArithmExpr, sc scope) {
	switch e := e.(type) {
	case nil:
	case *syntax.BinaryArithm:
		r.arith(e.X, sc)
		r.arith(e.Y, sc)
	case *syntax.UnaryArithm:
		r.arith(e.X, sc)
	case *syntax.ParenArithm:
		r.arith(e.X, sc)
	case *syntax.FlagsArithm:
		r.arith(e.X, sc)
	case *syntax.Word:
		for _, p := range e.Parts {
			if lit, ok := p.(*syntax.Lit); ok {
				if !isNumber(lit.Value) {
					r.evalVars = true
				}
				continue
			}
			r.evalVars = true
			r.part(p, sc)
			if hasCmdSubst(p) {
				r.markUnresolved("arithmetic evaluates the output of a command substitution, which may run commands")
			}
		}
	}
}

// hasCmdSubst reports whether a word part is, or holds in double quotes, a
// command or process substitution.
func hasCmdSubst(p syntax.WordPart) bool {
	switch p := p.(type) {
	case *syntax.CmdSubst, *syntax.ProcSubst:
		return true
	case *syntax.DblQuoted:
		return slices.ContainsFunc(p.Parts, hasCmdSubst)
	}
	return false
}

// isNumber reports whether s is an arithmetic constant (42, 0x1f, 8#17).
func isNumber(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '#' || c == '@' || c == '_') {
			return false
		}
	}
	return s[0] >= '0' && s[0] <= '9'
}

// test walks a [[ ]] expression: arithmetic comparisons evaluate their
// operands, and -v evaluates a subscript.
func (r *resolver) test(e syntax.TestExpr, sc scope) {
	switch e := e.(type) {
	case nil:
	case *syntax.BinaryTest:
		switch e.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, x := range []syntax.TestExpr{e.X, e.Y} {
				if w, ok := x.(*syntax.Word); ok {
					r.arith(w, sc)
					continue
				}
				r.test(x, sc)
			}
			return
		}
		r.test(e.X, sc)
		r.test(e.Y, sc)
	case *syntax.UnaryTest:
		if w, ok := e.X.(*syntax.Word); ok && e.Op == syntax.TsVarSet {
			r.varNames([]word{r.word(w, sc)}, "[[ -v ]]")
			return
		}
		r.test(e.X, sc)
	case *syntax.ParenTest:
		r.test(e.X, sc)
	case *syntax.Word:
		r.word(e, sc)
	}
}

// decl walks declare, local, export, readonly, typeset and nameref.
func (r *resolver) decl(c *syntax.DeclClause, sc scope) {
	r.markOpaque(c.Variant.Value + " declares shell variables, which later commands may read")
	if c.Variant.Value == "nameref" {
		r.markUnresolved("nameref makes a name stand for another variable, PATH among them")
	}
	integer := false
	for _, a := range c.Args {
		if a.Name != nil {
			r.assign(a, sc)
			continue
		}
		w := r.word(a.Value, sc)
		switch {
		case !w.literal:
			r.markUnresolved(fmt.Sprintf("%s %s: a declaration only known when the script runs", c.Variant.Value, w.text))
		case strings.HasPrefix(w.text, "-") || strings.HasPrefix(w.text, "+"):
			integer = integer || strings.Contains(w.text, "i")
			if strings.Contains(w.text, "n") {
				r.markUnresolved(c.Variant.Value + " -n makes a name stand for another variable, PATH among them")
			}
		default:
			name, value, _ := strings.Cut(w.text, "=")
			r.varNames([]word{{text: name, literal: true}}, c.Variant.Value)
			r.assignName(name, word{text: value, literal: true}, sc)
		}
	}
	if integer {
		r.evalVars = true
	}
}

// varNames checks the variable names a builtin (read, printf -v, unset,
// [[ -v ]], declare...) is given: bash evaluates the subscript of an array
// element, which runs the command substitutions in it, and a name only
// known when the script runs may be such an element.
func (r *resolver) varNames(names []word, builtin string) {
	for _, n := range names {
		switch {
		case !n.literal:
			r.markUnresolved(fmt.Sprintf("%s is given the variable name %s, only known when the script runs", builtin, n.text))
		case strings.Contains(n.text, "["):
			r.markUnresolved(fmt.Sprintf("%s evaluates the array subscript of %s, which may run commands", builtin, n.text))
		default:
			r.assignName(n.text, word{text: "a value read at run time"}, scope{})
		}
	}
}

// sourceOf returns n as written in src.
func sourceOf(src string, n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(src) || start > end {
		return ""
	}
	return src[start:end]
}

// command resolves a simple command from its words (after the
// assignments in front of it, prefix): the program's base name and its
// arguments are a subject, and so is the command with its prefix or its
// path when it has one; then what the program does with its arguments
// (see program).
func (r *resolver) command(ws []word, prefix []string, sc scope) {
	if len(ws) == 0 {
		return
	}
	if r.commands++; r.commands > maxCommands {
		r.markUnresolved(fmt.Sprintf("the script runs more than %d commands", maxCommands))
		return
	}
	name := ws[0]
	if !name.literal || name.glob {
		r.add(strings.Join(append(slices.Clone(prefix), joinWords(ws)), " "))
		r.markUnresolved(fmt.Sprintf("the command name %s is only known when the script runs", name.text))
		return
	}
	if strings.ContainsAny(name.text, " \t\n") {
		// Its subject would read as a program with arguments.
		r.markOpaque(fmt.Sprintf("the command name %q holds white space", name.text))
	}
	base := programName(name.text)
	args := ws[1:]
	resolved := strings.Join(append([]string{base}, wordTexts(args)...), " ")
	r.add(resolved)
	if len(prefix) > 0 {
		r.add(strings.Join(prefix, " ") + " " + resolved)
	}
	if dir := path.Dir(name.text); strings.Contains(name.text, "/") && !slices.Contains(systemDirs, dir) {
		r.add(joinWords(ws))
	}
	for _, a := range args {
		switch {
		case !a.literal:
			r.markOpaque(fmt.Sprintf("the argument %s of %s is only known when the script runs", a.text, base))
		case a.glob:
			r.markOpaque(fmt.Sprintf("the pattern %s given to %s expands to file names, which may read as options", a.text, base))
		}
	}
	r.program(invocation{name: base, args: args, sc: sc})
}

// programName is the name a program is known by: the base name of a path
// ("/bin/rm" is "rm").
func programName(name string) string {
	if !strings.Contains(name, "/") {
		return name
	}
	return path.Base(name)
}
