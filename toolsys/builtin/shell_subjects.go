package builtin

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agcore/agcore/toolsys"
)

// scriptSubjects resolves a bash script into the subjects permission rules
// are matched against: every command it would run, found on the syntax tree
// (mvdan.cc/sh) in lists, pipelines, && and || chains, { } groups,
// subshells, if, while, for and case clauses, function bodies, command and
// process substitutions, coprocesses, and in shell code the script hands to
// a shell (bash -c '...', a here-string or literal here-document fed to a
// shell, eval of literal text, trap actions, git aliases and pagers).
//
// Each command is a subject as the program's base name and its arguments
// after quote removal ("X=1 /bin/rm -f v" runs "rm -f v"). A command given
// to a wrapper that runs its arguments (command, exec, builtin, env, nice,
// nohup, timeout, time, stdbuf, setsid, sudo, doas, xargs, find -exec, ...)
// is resolved through the wrapper's own options, and the wrapper's command
// is a subject too ("env -i rm -f v" is "rm -f v" and "env -i rm -f v"); so
// are a command with assignments in front of it and a program named by a
// path outside the system directories, as written. A deny rule refuses the
// script if it matches any subject; an allow rule holds only if every
// subject is allowed.
//
// What the resolver cannot name makes the script Unresolved: a command
// name from a variable, a substitution or a pattern, aliases, eval of text
// only known at run time, source, shell code a shell reads from a pipe or a
// file, settings that make a program run one the script does not show
// (PATH=..., git -c core.hooksPath=..., git --exec-path=...). Any deny rule
// with an argument pattern refuses an Unresolved script: "$(echo rm) -f v"
// may be rm, and nothing shows it is not, so bash(rm *) denies it.
//
// What is visible but beyond the words makes the script Opaque, so that no
// allow rule with a pattern vouches for it: program text given to an
// interpreter (python -c, perl -e, node -e, awk with system or a pipe, text
// fed to one on its input), a script file given to a shell, known escapes
// of programs that an allow rule may name (git -c alias.x=!..., git -c
// core.pager=..., go run, go test -exec, make VAR=..., npm run, npx,
// xargs), arguments only known at run time, glob patterns, redirections to
// files, here-documents, function definitions, variable assignments, and a
// script with no command.
//
// These rules are a guard-rail for the honest mistakes of a model, not a
// security boundary: a program may do anything its arguments allow, and
// the boundary of what bash can reach is the kernel confinement it runs in.
func scriptSubjects(script string) toolsys.Subjects {
	r := newResolver()
	r.script(script, syntax.LangBash, 0, input{kind: inputEmpty})
	return r.subjects()
}

// invocation is a program, its arguments, and where it runs.
type invocation struct {
	name string // the base name
	args []word
	sc   scope
}

// program follows what a program does with its arguments when it runs
// another command, shell code or program text.
func (r *resolver) program(c invocation) {
	if lang, ok := shellLanguages[c.name]; ok {
		r.shell(c, lang)
		return
	}
	if foreignShells[c.name] {
		r.markUnresolved(fmt.Sprintf("%s runs shell code the rules cannot read", c.name))
		return
	}
	if spec, ok := interpreterFor(c.name); ok {
		r.interpreter(c, spec)
		return
	}
	if spec, ok := wrappers[c.name]; ok {
		r.wrapper(c, spec)
		return
	}
	switch c.name {
	case "env":
		r.env(c, 0)
	case "builtin":
		r.command(c.args, nil, c.sc)
	case "xargs":
		r.xargs(c)
	case "find":
		r.find(c)
	case "eval":
		r.eval(c)
	case "source", ".":
		r.markUnresolved(fmt.Sprintf("%s runs the shell code of a file", c.name))
	case "trap":
		r.trap(c)
	case "alias":
		for _, a := range c.args {
			if !a.literal || strings.Contains(a.text, "=") {
				r.markUnresolved("alias makes a later command name stand for other commands")
			}
		}
	case "hash", "enable", "complete", "compgen", "bind", "mapfile", "readarray", "fc":
		r.loaders(c)
	case "read", "unset", "printf", "getopts", "wait", "test", "[":
		r.nameBuiltin(c)
	case "declare", "typeset", "local", "export", "readonly":
		r.declArgs(c)
	case "awk", "gawk", "mawk", "nawk":
		r.awk(c)
	case "git":
		r.git(c)
	case "go":
		r.goTool(c)
	case "make", "gmake":
		r.make(c)
	case "npm", "pnpm", "yarn", "npx", "pnpx", "bunx":
		r.npm(c)
	case "watch":
		r.watch(c)
	case "flock":
		r.flock(c)
	case "su", "runuser":
		r.su(c)
	}
}

// optArg says whether a long option takes a value.
type optArg int

const (
	noArg       optArg = iota
	requiredArg        // --name=value or --name value
	optionalArg        // --name or --name=value
)

// options describes a program's options as getopt_long reads them, up to
// the first operand.
type options struct {
	flags    string            // short options without a value
	valued   string            // short options with a value, attached or next
	attached string            // short options whose value may only be attached (-i{})
	long     map[string]optArg // long options, without "--"
	numeric  bool              // "-5": a numeric option (nice)
}

// option is one option read from the command line.
type option struct {
	name  string // the short letter, or the long name
	value word
}

// errUnknownOption is the cause of a parse error on an option the resolver
// does not know, which may take the next argument as its value.
var errUnknownOption = errors.New("unknown option")

// parse reads args as options up to the first operand (or "--") and
// returns them and the operands. An option it does not know, or an
// argument only known at run time in the options, is an error: either
// could change which argument is the command.
func (o options) parse(args []word) ([]option, []word, error) {
	var opts []option
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.literal {
			return nil, nil, fmt.Errorf("the argument %s is only known when the script runs", a.text)
		}
		t := a.text
		switch {
		case t == "--":
			return opts, args[i+1:], nil
		case t == "-" || !strings.HasPrefix(t, "-"):
			return opts, args[i:], nil
		case strings.HasPrefix(t, "--"):
			name, value, hasValue := strings.Cut(t[2:], "=")
			full, kind, err := o.longOption(name)
			if err != nil {
				return nil, nil, err
			}
			opt := option{name: full}
			switch {
			case hasValue && kind == noArg:
				return nil, nil, fmt.Errorf("option --%s takes no value", full)
			case hasValue:
				opt.value = word{text: value, literal: true}
			case kind == requiredArg:
				if i+1 >= len(args) {
					return opts, nil, nil
				}
				i++
				opt.value = args[i]
			}
			opts = append(opts, opt)
		default:
			for j := 1; j < len(t); j++ {
				c := t[j : j+1]
				switch {
				case strings.Contains(o.flags, c):
					opts = append(opts, option{name: c})
				case strings.Contains(o.attached, c):
					opts = append(opts, option{name: c, value: word{text: t[j+1:], literal: true}})
					j = len(t)
				case strings.Contains(o.valued, c):
					opt := option{name: c, value: word{text: t[j+1:], literal: true}}
					if j+1 == len(t) {
						if i+1 >= len(args) {
							return append(opts, opt), nil, nil
						}
						i++
						opt.value = args[i]
					}
					opts = append(opts, opt)
					j = len(t)
				case o.numeric && c[0] >= '0' && c[0] <= '9':
					opts = append(opts, option{name: "n", value: word{text: t[j:], literal: true}})
					j = len(t)
				default:
					return nil, nil, fmt.Errorf("%w -%s", errUnknownOption, c)
				}
			}
		}
	}
	return opts, nil, nil
}

// longOption finds a long option by its name or an unambiguous prefix of
// it, as getopt_long does.
func (o options) longOption(name string) (string, optArg, error) {
	if kind, ok := o.long[name]; ok {
		return name, kind, nil
	}
	var found []string
	for full := range o.long {
		if strings.HasPrefix(full, name) {
			found = append(found, full)
		}
	}
	if len(found) != 1 {
		return "", 0, fmt.Errorf("%w --%s", errUnknownOption, name)
	}
	return found[0], o.long[found[0]], nil
}

// hasOption reports whether opts hold one of the named options.
func hasOption(opts []option, names ...string) bool {
	return slices.ContainsFunc(opts, func(o option) bool { return slices.Contains(names, o.name) })
}

// optionValues returns the values of the named options.
func optionValues(opts []option, names ...string) []word {
	var vs []word
	for _, o := range opts {
		if slices.Contains(names, o.name) {
			vs = append(vs, o.value)
		}
	}
	return vs
}

// wrapperSpec describes a program that runs the command its operands name.
type wrapperSpec struct {
	opts    options
	skip    int      // operands before the command (timeout's duration)
	noRun   []string // options with which no command runs (command -v)
	shell   []string // options that start a shell when no command follows (sudo -s)
	assigns bool     // NAME=value operands may come before the command (sudo)
	// shellAlone says the program starts an interactive shell when no
	// command follows (chroot).
	shellAlone bool
}

// wrappers run the command their operands name.
var wrappers = map[string]wrapperSpec{
	"command": {opts: options{flags: "pvV"}, noRun: []string{"v", "V"}},
	"exec":    {opts: options{flags: "cl", valued: "a"}},
	"nohup":   {opts: options{long: map[string]optArg{"help": noArg, "version": noArg}}, noRun: []string{"help", "version"}},
	"nice": {opts: options{valued: "n", numeric: true, long: map[string]optArg{"adjustment": requiredArg, "help": noArg, "version": noArg}},
		noRun: []string{"help", "version"}},
	"timeout": {opts: options{flags: "v", valued: "sk", long: map[string]optArg{"signal": requiredArg, "kill-after": requiredArg,
		"foreground": noArg, "preserve-status": noArg, "verbose": noArg, "help": noArg, "version": noArg}},
		skip: 1, noRun: []string{"help", "version"}},
	"time": {opts: options{flags: "apvqV", valued: "fo", long: map[string]optArg{"format": requiredArg, "output": requiredArg,
		"append": noArg, "portability": noArg, "verbose": noArg, "quiet": noArg, "help": noArg, "version": noArg}},
		noRun: []string{"V", "help", "version"}},
	"stdbuf": {opts: options{valued: "ioe", long: map[string]optArg{"input": requiredArg, "output": requiredArg, "error": requiredArg,
		"help": noArg, "version": noArg}}, noRun: []string{"help", "version"}},
	"setsid": {opts: options{flags: "cfwhV", long: map[string]optArg{"ctty": noArg, "fork": noArg, "wait": noArg, "help": noArg, "version": noArg}},
		noRun: []string{"h", "V", "help", "version"}},
	"ionice": {opts: options{flags: "thV", valued: "cnpPu", long: map[string]optArg{"class": requiredArg, "classdata": requiredArg,
		"pid": requiredArg, "pgid": requiredArg, "uid": requiredArg, "ignore": noArg, "help": noArg, "version": noArg}},
		noRun: []string{"p", "P", "u", "pid", "pgid", "uid", "h", "V", "help", "version"}},
	"taskset": {opts: options{flags: "acphV", long: map[string]optArg{"all-tasks": noArg, "cpu-list": noArg, "pid": noArg, "help": noArg, "version": noArg}},
		skip: 1, noRun: []string{"p", "pid", "h", "V", "help", "version"}},
	"chroot": {opts: options{long: map[string]optArg{"userspec": requiredArg, "groups": requiredArg, "skip-chdir": noArg, "help": noArg, "version": noArg}},
		skip: 1, noRun: []string{"help", "version"}, shellAlone: true},
	"sudo": {opts: options{flags: "AbBEeHiKklnPSsVv", valued: "CDghpRrTtUu", long: map[string]optArg{
		"askpass": noArg, "background": noArg, "bell": noArg, "close-from": requiredArg, "chdir": requiredArg,
		"preserve-env": optionalArg, "edit": noArg, "group": requiredArg, "set-home": noArg, "help": noArg, "host": requiredArg,
		"login": noArg, "remove-timestamp": noArg, "reset-timestamp": noArg, "list": noArg, "non-interactive": noArg,
		"preserve-groups": noArg, "prompt": requiredArg, "chroot": requiredArg, "role": requiredArg, "stdin": noArg, "shell": noArg,
		"type": requiredArg, "command-timeout": requiredArg, "other-user": requiredArg, "user": requiredArg, "version": noArg,
		"validate": noArg}},
		noRun: []string{"e", "edit", "l", "list", "V", "version", "help", "K", "remove-timestamp", "v", "validate"},
		shell: []string{"s", "shell", "i", "login"}, assigns: true},
	"doas": {opts: options{flags: "Lns", valued: "Cu"}, noRun: []string{"C", "L"}, shell: []string{"s"}},
	"busybox": {opts: options{long: map[string]optArg{"list": noArg, "list-full": noArg, "help": noArg, "install": noArg}},
		noRun: []string{"list", "list-full", "help", "install"}},
}

// wrapper resolves the command a wrapper runs.
func (r *resolver) wrapper(c invocation, w wrapperSpec) {
	opts, operands, err := w.opts.parse(c.args)
	if err != nil {
		r.markUnresolved(fmt.Sprintf("%s: %v, so the command it runs is unknown", c.name, err))
		return
	}
	if hasOption(opts, w.noRun...) {
		return
	}
	if c.name == "sudo" && hasOption(opts, "h") && len(operands) > 0 {
		r.markUnresolved("sudo -h: the host option or help, so the command it runs is unknown")
		return
	}
	if w.assigns {
		for len(operands) > 0 && isAssignment(operands[0]) {
			name, value, _ := strings.Cut(operands[0].text, "=")
			r.assignName(name, word{text: value, literal: true}, c.sc)
			operands = operands[1:]
		}
	}
	if len(operands) <= w.skip {
		if hasOption(opts, w.shell...) || w.shellAlone && len(operands) == w.skip {
			r.shellInput(c.name+" starts a shell that", syntax.LangBash, c.sc)
		}
		return
	}
	r.command(operands[w.skip:], nil, c.sc)
}

// assignmentWord is NAME=value.
var assignmentWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// isAssignment reports whether w is a literal NAME=value.
func isAssignment(w word) bool { return w.literal && assignmentWord.MatchString(w.text) }

// envOptions are GNU env's.
var envOptions = options{flags: "i0v", valued: "uCSa", long: map[string]optArg{
	"ignore-environment": noArg, "null": noArg, "unset": requiredArg, "chdir": requiredArg, "split-string": requiredArg,
	"debug": noArg, "block-signal": optionalArg, "default-signal": optionalArg, "ignore-signal": optionalArg,
	"list-signal-handling": noArg, "argv0": requiredArg, "help": noArg, "version": noArg}}

// env resolves the command env runs: after its options and NAME=value
// operands, or the words of its -S string followed by the operands.
func (r *resolver) env(c invocation, depth int) {
	opts, operands, err := envOptions.parse(c.args)
	if err != nil {
		r.markUnresolved(fmt.Sprintf("env: %v, so the command it runs is unknown", err))
		return
	}
	if hasOption(opts, "help", "version", "list-signal-handling") {
		return
	}
	if split := optionValues(opts, "S", "split-string"); len(split) > 0 {
		var ws []word
		for _, s := range split {
			words, ok := r.splitString(s)
			if !ok || depth >= maxNestedScripts {
				r.markUnresolved(fmt.Sprintf("env -S %s: the command it runs is unknown", s.text))
				return
			}
			ws = append(ws, words...)
		}
		r.env(invocation{name: c.name, args: append(ws, operands...), sc: c.sc}, depth+1)
		return
	}
	if len(operands) > 0 && operands[0].literal && operands[0].text == "-" {
		operands = operands[1:] // "-" is -i
	}
	for len(operands) > 0 && isAssignment(operands[0]) {
		name, value, _ := strings.Cut(operands[0].text, "=")
		r.assignName(name, word{text: value, literal: true}, c.sc)
		operands = operands[1:]
	}
	r.command(operands, nil, c.sc)
}

// splitString splits the string of env -S into words, quoted as a shell
// would; it fails unless the string is literal, simple words.
func (r *resolver) splitString(s word) ([]word, bool) {
	if !s.literal {
		return nil, false
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(s.text), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, len(strings.TrimSpace(s.text)) == 0 && err == nil
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(f.Stmts[0].Redirs) > 0 {
		return nil, false
	}
	sc := scope{src: s.text}
	var ws []word
	for _, a := range call.Assigns {
		ws = append(ws, word{text: r.assign(a, sc), literal: true})
	}
	for _, a := range call.Args {
		w := r.word(a, sc)
		if !w.literal {
			return nil, false
		}
		ws = append(ws, w)
	}
	return ws, true
}

// xargsOptions are GNU xargs's.
var xargsOptions = options{flags: "0prtxo", valued: "aEdIPLns", attached: "eil", long: map[string]optArg{
	"null": noArg, "arg-file": requiredArg, "delimiter": requiredArg, "eof": optionalArg, "replace": optionalArg,
	"max-lines": optionalArg, "max-args": requiredArg, "max-procs": requiredArg, "interactive": noArg,
	"no-run-if-empty": noArg, "max-chars": requiredArg, "verbose": noArg, "exit": noArg, "process-slot-var": requiredArg,
	"open-tty": noArg, "show-limits": noArg, "help": noArg, "version": noArg}}

// xargs resolves the command xargs runs (echo by default), whose further
// arguments are read from its input: never vouched for by allow rules.
func (r *resolver) xargs(c invocation) {
	opts, operands, err := xargsOptions.parse(c.args)
	if err != nil {
		r.markUnresolved(fmt.Sprintf("xargs: %v, so the command it runs is unknown", err))
		return
	}
	if hasOption(opts, "help", "version", "show-limits") {
		return
	}
	if len(operands) == 0 {
		operands = literalWords("echo")
	}
	for _, repl := range optionValues(opts, "I", "i", "replace") {
		if repl.text == "" {
			repl.text = "{}"
		}
		if strings.Contains(operands[0].text, repl.text) {
			r.markUnresolved(fmt.Sprintf("xargs runs %s, a command name read from its input", operands[0].text))
			return
		}
	}
	r.markOpaque(fmt.Sprintf("xargs runs %s with arguments read from its input", operands[0].text))
	r.command(operands, nil, c.sc)
}

// find resolves the commands of -exec, -execdir, -ok and -okdir; -delete
// counts as running rm on each file found.
func (r *resolver) find(c invocation) {
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.literal {
			r.markUnresolved(fmt.Sprintf("find's expression holds %s, only known when the script runs, and may run commands", a.text))
			return
		}
		switch a.text {
		case "-exec", "-execdir", "-ok", "-okdir":
			end := i + 1
			for end < len(args) && !(args[end].literal && (args[end].text == ";" || args[end].text == "+")) {
				end++
			}
			inner := args[i+1 : end]
			if len(inner) > 0 && strings.Contains(inner[0].text, "{}") {
				r.markUnresolved("find " + a.text + " runs the files it finds as commands")
				return
			}
			r.command(inner, nil, c.sc)
			i = end
		case "-delete":
			r.add("rm {}")
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			r.markOpaque("find " + a.text + " writes to a file")
		}
	}
}

// eval runs its arguments, joined by spaces, as shell code.
func (r *resolver) eval(c invocation) {
	r.markOpaque("eval runs its arguments as shell code")
	for _, a := range c.args {
		if !a.literal {
			r.markUnresolved(fmt.Sprintf("eval runs %s, shell code only known when the script runs", a.text))
			return
		}
	}
	r.script(joinWords(c.args), c.sc.lang, c.sc.depth+1, c.sc.stdin)
}

// trap runs its action as shell code when a signal comes.
func (r *resolver) trap(c invocation) {
	args := c.args
	if len(args) > 0 && args[0].literal && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) < 2 || args[0].literal && strings.HasPrefix(args[0].text, "-") {
		return // listing, printing, or resetting signals
	}
	if !args[0].literal {
		r.markUnresolved(fmt.Sprintf("trap runs %s, shell code only known when the script runs", args[0].text))
		return
	}
	r.markOpaque("trap runs shell code when a signal comes")
	r.nested(args[0].text, c.sc)
}

// loaders are builtins that, with some options, load or run code: hash -p
// names a program for a command, enable -f loads a builtin, complete and
// compgen -C and -F run completers, bind -x runs shell code, mapfile -C
// runs a callback, fc runs commands from the history.
func (r *resolver) loaders(c invocation) {
	risky := map[string]string{"hash": "p", "enable": "f", "complete": "CF", "compgen": "CF", "bind": "x", "mapfile": "C", "readarray": "C"}[c.name]
	for _, a := range c.args {
		switch {
		case c.name == "fc":
			r.markUnresolved("fc runs commands from the history")
			return
		case !a.literal:
			r.markUnresolved(fmt.Sprintf("%s is given %s, only known when the script runs", c.name, a.text))
			return
		case strings.HasPrefix(a.text, "-") && strings.ContainsAny(a.text[1:], risky):
			r.markUnresolved(fmt.Sprintf("%s %s makes bash run code the rules cannot see", c.name, a.text))
			return
		}
	}
	if c.name == "fc" {
		r.markUnresolved("fc runs commands from the history")
	}
	if c.name == "mapfile" || c.name == "readarray" {
		r.nameBuiltin(c)
	}
}

// nameBuiltins are builtins that assign the variables they are named:
// their options with a value, and those whose value is a variable name.
var nameBuiltins = map[string]struct {
	opts    options
	nameOpt string // options whose value is a variable name
	names   func(operands []word) []word
}{
	"read":      {options{flags: "ers", valued: "adeinNptu"}, "a", func(ops []word) []word { return ops }},
	"unset":     {options{flags: "fvn"}, "", func(ops []word) []word { return ops }},
	"printf":    {options{valued: "v"}, "v", func([]word) []word { return nil }},
	"wait":      {options{flags: "fn", valued: "p"}, "p", func([]word) []word { return nil }},
	"getopts":   {options{}, "", func(ops []word) []word { return ops[min(1, len(ops)):min(2, len(ops))] }},
	"mapfile":   {options{flags: "t", valued: "dnOsuCc"}, "", func(ops []word) []word { return ops }},
	"readarray": {options{flags: "t", valued: "dnOsuCc"}, "", func(ops []word) []word { return ops }},
}

// nameBuiltin checks the variable names a builtin assigns or tests (see
// varNames).
func (r *resolver) nameBuiltin(c invocation) {
	if c.name == "test" || c.name == "[" {
		for i, a := range c.args {
			if a.literal && a.text == "-v" && i+1 < len(c.args) {
				r.varNames(c.args[i+1:i+2], c.name+" -v")
			}
		}
		return
	}
	spec := nameBuiltins[c.name]
	opts, operands, err := spec.opts.parse(c.args)
	if err != nil {
		if errors.Is(err, errUnknownOption) {
			return // the builtin fails on it
		}
		r.markUnresolved(fmt.Sprintf("%s: %v", c.name, err))
		return
	}
	names := spec.names(operands)
	if spec.nameOpt != "" {
		names = append(names, optionValues(opts, spec.nameOpt)...)
	}
	if c.name == "unset" && hasOption(opts, "f") {
		names = nil
	}
	r.varNames(names, c.name)
}

// declArgs checks declare, typeset, local, export and readonly run as
// commands (through command or builtin).
func (r *resolver) declArgs(c invocation) {
	r.markOpaque(c.name + " declares shell variables, which later commands may read")
	for _, a := range c.args {
		switch {
		case !a.literal:
			r.markUnresolved(fmt.Sprintf("%s %s: a declaration only known when the script runs", c.name, a.text))
		case strings.HasPrefix(a.text, "-") || strings.HasPrefix(a.text, "+"):
			if strings.Contains(a.text, "i") {
				r.evalVars = true
			}
			if strings.Contains(a.text, "n") {
				r.markUnresolved(c.name + " -n makes a name stand for another variable, PATH among them")
			}
		default:
			name, value, _ := strings.Cut(a.text, "=")
			r.varNames([]word{{text: name, literal: true}}, c.name)
			r.assignName(name, word{text: value, literal: true}, c.sc)
		}
	}
}

// commandVars hold a command line that programs run: git, pagers, editors,
// askpass helpers, and bash's own PS4 and PROMPT_COMMAND.
var commandVars = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_PAGER": true, "PAGER": true, "MANPAGER": true, "GIT_EDITOR": true,
	"EDITOR": true, "VISUAL": true, "FCEDIT": true, "GIT_SEQUENCE_EDITOR": true, "GIT_EXTERNAL_DIFF": true,
	"GIT_ASKPASS": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true, "GIT_PROXY_COMMAND": true, "LESSOPEN": true,
	"LESSCLOSE": true, "BROWSER": true, "PS4": true, "PROMPT_COMMAND": true,
}

// lookupVars change which program, library or code later commands run.
var lookupVars = map[string]bool{
	"PATH": true, "BASH_ENV": true, "ENV": true, "BASH_LOADABLES_PATH": true, "SHELLOPTS": true, "BASHOPTS": true,
	"GIT_EXEC_PATH": true, "GIT_DIR": true, "GIT_TEMPLATE_DIR": true, "GIT_CONFIG": true, "GIT_CONFIG_GLOBAL": true,
	"GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true, "NODE_OPTIONS": true,
	"NODE_PATH": true, "PYTHONPATH": true, "PYTHONSTARTUP": true, "PYTHONHOME": true, "PERL5OPT": true,
	"PERL5LIB": true, "PERLLIB": true, "RUBYOPT": true, "RUBYLIB": true, "GOFLAGS": true,
}

// assignName checks an assignment to a variable: one that holds a command
// line has it resolved (and is opaque), one that changes which programs
// run is unresolved.
func (r *resolver) assignName(name string, value word, sc scope) {
	switch {
	case commandVars[name]:
		if !value.literal {
			r.markUnresolved(fmt.Sprintf("%s is set to a command only known when the script runs", name))
			return
		}
		r.markOpaque(fmt.Sprintf("%s=... makes programs run the command it holds", name))
		r.nested(value.text, sc)
	case lookupVars[name] || strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "GIT_CONFIG_"):
		r.markUnresolved(fmt.Sprintf("%s=... changes which programs or code later commands run", name))
	}
}

// shellLanguages are the shells whose code the resolver reads, with the
// language they speak.
var shellLanguages = map[string]syntax.LangVariant{
	"sh": syntax.LangPOSIX, "dash": syntax.LangPOSIX, "ash": syntax.LangPOSIX, "bash": syntax.LangBash,
	"rbash": syntax.LangBash, "zsh": syntax.LangZsh, "ksh": syntax.LangMirBSDKorn, "mksh": syntax.LangMirBSDKorn,
	"pdksh": syntax.LangMirBSDKorn, "ksh93": syntax.LangMirBSDKorn,
}

// foreignShells run shell code the resolver cannot read.
var foreignShells = map[string]bool{
	"fish": true, "csh": true, "tcsh": true, "pwsh": true, "powershell": true, "nu": true, "xonsh": true,
	"elvish": true, "yash": true, "rc": true, "es": true,
}

// shell resolves the script a shell runs: the string of -c, a here-string
// or literal here-document on its input; a script file, or a script read
// from a pipe or a file, is unresolved.
func (r *resolver) shell(c invocation, lang syntax.LangVariant) {
	cmdMode, stdinMode := false, false
	i := 0
options:
	for ; i < len(c.args); i++ {
		a := c.args[i]
		if !a.literal {
			r.markUnresolved(fmt.Sprintf("%s is given %s, only known when the script runs", c.name, a.text))
			return
		}
		t := a.text
		switch {
		case t == "--" || t == "-":
			i++
			break options
		case strings.HasPrefix(t, "--"):
			switch t {
			case "--norc", "--noprofile", "--posix", "--login", "--restricted", "--verbose", "--noediting",
				"--debugger", "--dump-strings", "--dump-po-strings", "--protected", "--help", "--version":
			default:
				r.markUnresolved(fmt.Sprintf("%s %s: the code it runs is unknown", c.name, t))
				return
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for _, l := range t[1:] {
				switch {
				case l == 'c':
					cmdMode = true
				case l == 's':
					stdinMode = true
				case l == 'o' || l == 'O':
					i++ // the option's name
				case strings.ContainsRune("abefhiklmnprtuvxBCDEHPT", l):
				default:
					r.markUnresolved(fmt.Sprintf("%s %s: the code it runs is unknown", c.name, t))
					return
				}
			}
		default:
			break options
		}
	}
	rest := c.args[min(i, len(c.args)):]
	switch {
	case cmdMode:
		if len(rest) == 0 {
			return
		}
		if !rest[0].literal {
			r.markUnresolved(fmt.Sprintf("%s -c runs %s, a script only known when the script runs", c.name, rest[0].text))
			return
		}
		r.script(rest[0].text, lang, c.sc.depth+1, c.sc.stdin)
	case len(rest) > 0 && !stdinMode:
		// A program running a file, as ./x.sh or python3 x.py would.
		r.markOpaque(fmt.Sprintf("%s runs the script file %s, which the rules cannot read", c.name, rest[0].text))
	default:
		r.shellInput(c.name, lang, c.sc)
	}
}

// shellInput resolves the script a shell reads from its input: known text
// is parsed; a pipe, a file or text with expansions is unresolved; no
// input runs nothing.
func (r *resolver) shellInput(shell string, lang syntax.LangVariant, sc scope) {
	switch sc.stdin.kind {
	case inputText:
		r.script(sc.stdin.text, lang, sc.depth+1, input{kind: inputUnknown, from: "the rest of its script"})
	case inputUnknown:
		r.markUnresolved(fmt.Sprintf("%s reads its script from %s", shell, sc.stdin.from))
	}
}

// interpreterSpec says how an interpreter is given program text on its
// command line.
type interpreterSpec struct {
	short       string   // option letters that take program text (-c, -e)
	long        []string // long options that do
	subcommands []string // first operands that do (deno eval)
}

// interpreters run program text; the python versions are matched apart.
var interpreters = map[string]interpreterSpec{
	"python": {short: "c"}, "pypy": {short: "c"}, "pypy3": {short: "c"},
	"perl": {short: "eE"}, "ruby": {short: "e"}, "irb": {},
	"node": {short: "ep", long: []string{"eval", "print"}}, "nodejs": {short: "ep", long: []string{"eval", "print"}},
	"bun":  {short: "ep", long: []string{"eval", "print"}, subcommands: []string{"run", "x", "exec", "test", "create"}},
	"deno": {subcommands: []string{"eval", "repl"}},
	"php":  {short: "rR", long: []string{"run"}}, "lua": {short: "e"}, "luajit": {short: "e"},
	"Rscript": {short: "e"}, "R": {short: "e"}, "julia": {short: "eE", long: []string{"eval", "print"}},
	"osascript": {short: "e"}, "tclsh": {}, "wish": {}, "expect": {short: "c"}, "guile": {short: "c"},
	"racket": {short: "e"}, "sbcl": {long: []string{"eval"}}, "jshell": {}, "groovy": {short: "e"},
	"scala": {short: "e"}, "elixir": {short: "e", long: []string{"eval"}}, "erl": {long: []string{"eval"}},
}

// versioned matches interpreter names with a version: python3, python3.12.
var versioned = regexp.MustCompile(`^(python|pypy|perl|ruby|php|lua)[0-9.]*$`)

// interpreterFor returns the spec of an interpreter.
func interpreterFor(name string) (interpreterSpec, bool) {
	if spec, ok := interpreters[name]; ok {
		return spec, true
	}
	if m := versioned.FindStringSubmatch(name); m != nil {
		return interpreters[m[1]], true
	}
	return interpreterSpec{}, false
}

// interpreter makes program text given to an interpreter opaque: on its
// command line, or on its input when it is given no script file. Options
// are looked for in every argument, so a script's own argument may make a
// call opaque too: that only asks more often.
func (r *resolver) interpreter(c invocation, spec interpreterSpec) {
	file := false
	for i, a := range c.args {
		if !a.literal {
			continue // opaque already
		}
		t := a.text
		switch {
		case strings.HasPrefix(t, "--"):
			name, _, _ := strings.Cut(t[2:], "=")
			if slices.Contains(spec.long, name) {
				r.markOpaque(fmt.Sprintf("%s runs program text given on its command line", c.name))
				return
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
			if strings.ContainsAny(t[1:], spec.short) {
				r.markOpaque(fmt.Sprintf("%s runs program text given on its command line", c.name))
				return
			}
		case i == 0 && slices.Contains(spec.subcommands, t):
			r.markOpaque(fmt.Sprintf("%s %s runs program text", c.name, t))
			return
		case t != "-":
			file = true
		}
	}
	if !file && c.sc.stdin.kind != inputEmpty {
		r.markOpaque(fmt.Sprintf("%s runs program text from its input", c.name))
	}
}

// awk makes an awk program that runs commands (system, or a pipe to or
// from one) opaque.
func (r *resolver) awk(c invocation) {
	opts, operands, err := options{valued: "fvFe", long: map[string]optArg{
		"file": requiredArg, "assign": requiredArg, "field-separator": requiredArg, "source": requiredArg,
	}}.parse(c.args)
	if err != nil {
		r.markOpaque(fmt.Sprintf("%s: %v", c.name, err))
		return
	}
	programs := optionValues(opts, "e", "source")
	if !hasOption(opts, "f", "file") && len(operands) > 0 {
		programs = append(programs, operands[0])
	}
	for _, p := range programs {
		if !p.literal || strings.Contains(p.text, "system") || strings.Contains(p.text, "|") {
			r.markOpaque(fmt.Sprintf("the %s program runs commands", c.name))
			return
		}
	}
}

// watch runs its operands, joined by spaces, with sh -c (or, with -x, as a
// command).
func (r *resolver) watch(c invocation) {
	opts, operands, err := options{flags: "bcefghprtwxC", valued: "nq", attached: "d", long: map[string]optArg{
		"beep": noArg, "color": noArg, "no-color": noArg, "differences": optionalArg, "errexit": noArg, "chgexit": noArg,
		"equexit": requiredArg, "interval": requiredArg, "precise": noArg, "no-rerun": noArg, "no-title": noArg,
		"no-wrap": noArg, "exec": noArg, "help": noArg, "version": noArg}}.parse(c.args)
	switch {
	case err != nil:
		r.markUnresolved(fmt.Sprintf("watch: %v, so the command it runs is unknown", err))
	case len(operands) == 0 || hasOption(opts, "help", "version"):
	case hasOption(opts, "x", "exec"):
		r.command(operands, nil, c.sc)
	default:
		for _, o := range operands {
			if !o.literal {
				r.markUnresolved(fmt.Sprintf("watch runs %s, shell code only known when the script runs", o.text))
				return
			}
		}
		r.script(joinWords(operands), syntax.LangPOSIX, c.sc.depth+1, c.sc.stdin)
	}
}

// flock runs the command of its operands after the lock file, or the
// shell code of -c.
func (r *resolver) flock(c invocation) {
	opts, operands, err := options{flags: "sxenuoFhV", valued: "wEc", long: map[string]optArg{
		"shared": noArg, "exclusive": noArg, "nonblock": noArg, "nb": noArg, "unlock": noArg, "timeout": requiredArg,
		"wait": requiredArg, "conflict-exit-code": requiredArg, "close": noArg, "command": requiredArg, "no-fork": noArg,
		"verbose": noArg, "help": noArg, "version": noArg}}.parse(c.args)
	if err != nil {
		r.markUnresolved(fmt.Sprintf("flock: %v, so the command it runs is unknown", err))
		return
	}
	for _, code := range optionValues(opts, "c", "command") {
		r.shellString("flock -c", code, c.sc)
	}
	if len(operands) > 1 {
		r.command(operands[1:], nil, c.sc)
	}
}

// su runs the shell code of -c, or starts a shell.
func (r *resolver) su(c invocation) {
	opts, _, err := options{flags: "lmpPfhV", valued: "cgGsw", long: map[string]optArg{
		"login": noArg, "preserve-environment": noArg, "pty": noArg, "command": requiredArg, "session-command": requiredArg,
		"shell": requiredArg, "group": requiredArg, "supp-group": requiredArg, "whitelist-environment": requiredArg,
		"fast": noArg, "help": noArg, "version": noArg}}.parse(c.args)
	switch {
	case err != nil:
		r.markUnresolved(fmt.Sprintf("%s: %v, so the command it runs is unknown", c.name, err))
	case hasOption(opts, "h", "V", "help", "version"):
	case hasOption(opts, "c", "command", "session-command"):
		for _, code := range optionValues(opts, "c", "command", "session-command") {
			r.shellString(c.name+" -c", code, c.sc)
		}
	default:
		r.shellInput(c.name+" starts a shell that", syntax.LangBash, c.sc)
	}
}

// shellString resolves shell code given to a program that runs it with a
// shell.
func (r *resolver) shellString(what string, code word, sc scope) {
	if !code.literal {
		r.markUnresolved(fmt.Sprintf("%s runs %s, shell code only known when the script runs", what, code.text))
		return
	}
	r.nested(code.text, sc)
}
