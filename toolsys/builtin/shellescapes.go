package builtin

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// This file holds the known argument-level escapes of programs that an
// allow rule such as bash(git *) names: arguments that make the program run
// another command. The command is resolved when the script shows it (so
// deny rules see it) and the call is opaque, so that no allow rule on the
// outer program vouches for it; when the script does not show it, the call
// is unresolved.

// gitCommandKeys are git settings that hold a command git runs (after a
// leading '!', where git allows one). "*" in the middle stands for any
// subsection; a final "*" for any name.
var gitCommandKeys = []string{
	"core.pager", "core.editor", "core.sshcommand", "core.askpass", "core.gitproxy", "core.fsmonitor",
	"sequence.editor", "diff.external", "diff.*.command", "diff.*.textconv", "merge.*.driver", "filter.*.clean",
	"filter.*.smudge", "filter.*.process", "credential.helper", "credential.*.helper", "gpg.program",
	"gpg.*.program", "pager.*", "interactive.difffilter", "uploadpack.packobjectshook", "remote.*.uploadpack",
	"remote.*.receivepack", "mergetool.*.cmd", "difftool.*.cmd", "browser.*.cmd", "man.*.cmd",
	"submodule.*.update", "sendemail.smtpserver",
}

// gitSafeKeys are git settings that change nothing git runs; any setting
// not listed here or in gitCommandKeys (core.hooksPath, include.path,
// url.*.insteadOf, protocol.*.allow, ...) may make git run a program the
// script does not show.
var gitSafeKeys = []string{
	"user.*", "color.*", "core.quotepath", "core.autocrlf", "core.safecrlf", "core.filemode", "core.ignorecase",
	"core.abbrev", "core.eol", "core.whitespace", "core.longpaths", "core.precomposeunicode", "init.defaultbranch",
	"advice.*", "log.*", "format.pretty", "commit.gpgsign", "tag.gpgsign", "pull.rebase", "pull.ff",
	"push.default", "push.autosetupremote", "merge.ff", "merge.conflictstyle", "diff.renames", "diff.algorithm",
	"diff.noprefix", "diff.mnemonicprefix", "diff.colormoved", "status.*", "i18n.*", "column.*", "gc.auto",
	"maintenance.auto", "fetch.prune", "rebase.autostash", "rebase.autosquash", "rerere.enabled",
	"safe.directory", "versionsort.*", "tag.sort", "branch.sort", "grep.patterntype",
}

// gitKeyIn reports whether the git setting key matches one of patterns.
// Section and name are compared without case; a subsection may hold dots.
func gitKeyIn(patterns []string, key string) bool {
	section, rest, ok := strings.Cut(key, ".")
	if !ok {
		return false
	}
	sub, name := "", rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		sub, name = rest[:i], rest[i+1:]
	}
	section, name = strings.ToLower(section), strings.ToLower(name)
	for _, p := range patterns {
		ps := strings.Split(p, ".")
		switch {
		case ps[0] != section:
		case len(ps) == 2 && (ps[1] == "*" || sub == "" && ps[1] == name):
			return true
		case len(ps) == 3 && sub != "" && ps[2] == name:
			return true
		}
	}
	return false
}

// isGitBool reports whether a setting's value is a boolean rather than a
// command (pager.log=false, core.fsmonitor=true).
func isGitBool(v string) bool {
	switch strings.ToLower(v) {
	case "", "true", "false", "yes", "no", "on", "off", "1", "0":
		return true
	}
	return false
}

// gitSetting checks one KEY=VALUE git setting (git -c, git config, git
// clone -c): a command it holds is resolved, and the call is opaque; a
// setting that may make git run a program unseen is unresolved.
func (r *resolver) gitSetting(what string, key, value word, c invocation) {
	switch section, _, _ := strings.Cut(key.text, "."); {
	case !key.literal:
		r.markUnresolved(fmt.Sprintf("%s %s: a git setting only known when the script runs", what, key.text))
	case gitKeyIn(gitSafeKeys, key.text):
	case !value.literal:
		r.markUnresolved(fmt.Sprintf("%s %s=%s: a value only known when the script runs", what, key.text, value.text))
	case strings.EqualFold(section, "alias"):
		r.markOpaque(fmt.Sprintf("%s %s defines a git alias, which runs what it says", what, key.text))
		if cmd, ok := strings.CutPrefix(value.text, "!"); ok {
			r.nested(cmd, c.sc)
		} else {
			r.nested("git "+value.text, c.sc)
		}
	case gitKeyIn(gitCommandKeys, key.text):
		r.markOpaque(fmt.Sprintf("%s %s makes git run a command", what, key.text))
		if !isGitBool(value.text) {
			r.nested(strings.TrimPrefix(value.text, "!"), c.sc)
		}
	default:
		r.markUnresolved(fmt.Sprintf("%s %s may make git run a program the rules cannot see", what, key.text))
	}
}

// gitSettingWord splits a KEY=VALUE word.
func gitSettingWord(kv word) (word, word) {
	if !kv.literal {
		return kv, kv
	}
	key, value, _ := strings.Cut(kv.text, "=")
	return word{text: key, literal: true}, word{text: value, literal: true}
}

// git follows git's global options (-c, --config-env, --exec-path) and the
// options of its subcommands that run commands.
func (r *resolver) git(c invocation) {
	args := c.args
	i := 0
global:
	for ; i < len(args); i++ {
		a := args[i]
		if !a.literal {
			r.markUnresolved(fmt.Sprintf("git is given %s before its subcommand, only known when the script runs", a.text))
			return
		}
		switch t := a.text; {
		case t == "-c":
			if i+1 < len(args) {
				i++
				key, value := gitSettingWord(args[i])
				r.gitSetting("git -c", key, value, c)
			}
		case t == "--config-env" || strings.HasPrefix(t, "--config-env="):
			kv, ok := strings.CutPrefix(t, "--config-env=")
			if !ok && i+1 < len(args) {
				i++
				kv = args[i].text
			}
			key, _, _ := strings.Cut(kv, "=")
			if !gitKeyIn(gitSafeKeys, key) {
				r.markUnresolved(fmt.Sprintf("git --config-env %s sets %s from the environment", kv, key))
			}
		case strings.HasPrefix(t, "--exec-path="):
			r.markUnresolved("git --exec-path=... runs git commands from another directory")
		case slices.Contains([]string{"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source", "--list-cmds"}, t):
			i++
		case strings.HasPrefix(t, "-"):
		default:
			break global
		}
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i].text, args[i+1:]
	switch sub {
	case "config":
		r.gitConfig(rest, c)
	case "clone", "init":
		for i, a := range rest {
			switch {
			case a.literal && (a.text == "-c" || a.text == "--config") && i+1 < len(rest):
				key, value := gitSettingWord(rest[i+1])
				r.gitSetting("git "+sub+" -c", key, value, c)
			case a.literal && strings.HasPrefix(a.text, "--config="):
				key, value := gitSettingWord(word{text: strings.TrimPrefix(a.text, "--config="), literal: true})
				r.gitSetting("git "+sub+" -c", key, value, c)
			case a.literal && (a.text == "--template" || strings.HasPrefix(a.text, "--template=")):
				r.markUnresolved("git " + sub + " --template installs hooks from a directory the rules cannot see")
			}
		}
		r.gitRuns(sub, rest, c, "u", "upload-pack")
	case "fetch", "pull", "ls-remote":
		r.gitRuns(sub, rest, c, "", "upload-pack")
	case "push", "send-pack":
		r.gitRuns(sub, rest, c, "", "receive-pack", "exec")
	case "archive":
		r.gitRuns(sub, rest, c, "", "exec")
	case "rebase":
		r.gitRuns(sub, rest, c, "x", "exec")
	case "grep":
		r.gitRuns(sub, rest, c, "O", "open-files-in-pager")
	case "difftool":
		r.gitRuns(sub, rest, c, "x", "extcmd")
	case "filter-branch":
		r.gitRuns(sub, rest, c, "", "env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter",
			"commit-filter", "tag-name-filter")
	case "bisect":
		if len(rest) > 0 && rest[0].text == "run" {
			r.markOpaque("git bisect run runs a command")
			r.command(rest[1:], nil, c.sc)
		}
	case "submodule":
		for i, a := range rest {
			if a.literal && a.text == "foreach" {
				cmd := rest[i+1:]
				for len(cmd) > 0 && cmd[0].literal && strings.HasPrefix(cmd[0].text, "-") {
					cmd = cmd[1:]
				}
				r.markOpaque("git submodule foreach runs shell code")
				r.shellString("git submodule foreach", word{text: joinWords(cmd), literal: !slices.ContainsFunc(cmd, func(w word) bool { return !w.literal })}, c.sc)
				break
			}
		}
	}
}

// gitRuns resolves the commands given to a git subcommand's options that
// run one (-x CMD, --exec=CMD, -OCMD).
func (r *resolver) gitRuns(sub string, args []word, c invocation, short string, long ...string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.literal {
			continue // opaque already
		}
		var cmd word
		found := false
		switch t := a.text; {
		case short == "O" && t == "-O": // git grep -O: the pager, its value only attached
			r.markOpaque("git grep -O runs a pager")
		case short != "" && t == "-"+short:
			if i+1 < len(args) {
				i++
				cmd, found = args[i], true
			}
		case short != "" && strings.HasPrefix(t, "-"+short) && !strings.HasPrefix(t, "--"):
			cmd, found = word{text: t[2:], literal: true}, true
		case strings.HasPrefix(t, "--"):
			name, value, hasValue := strings.Cut(t[2:], "=")
			if !slices.Contains(long, name) {
				continue
			}
			switch {
			case hasValue:
				cmd, found = word{text: value, literal: true}, true
			case name != "open-files-in-pager" && i+1 < len(args):
				i++
				cmd, found = args[i], true
			}
		}
		if found {
			r.markOpaque(fmt.Sprintf("git %s %s runs a command", sub, a.text))
			r.shellString("git "+sub+" "+a.text, cmd, c.sc)
		}
	}
}

// gitConfig checks what git config writes: the KEY VALUE of its set forms.
func (r *resolver) gitConfig(args []word, c invocation) {
	valued := []string{"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"}
	var operands []word
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.literal && slices.Contains(valued, a.text):
			i++
		case a.literal && strings.HasPrefix(a.text, "-"):
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) > 0 && operands[0].literal && operands[0].text == "set" {
		operands = operands[1:]
	}
	if len(operands) >= 2 && operands[0].literal && !slices.Contains([]string{"get", "unset", "list", "edit", "rename-section", "remove-section"}, operands[0].text) {
		r.gitSetting("git config", operands[0], operands[1], c)
	}
}

// goExecFlags are go build and test flags whose value is a program to run.
var goExecFlags = []string{"exec", "toolexec", "vettool"}

// goTool follows go run, go generate, go tool, go env -w, and the -exec,
// -toolexec and -vettool flags.
func (r *resolver) goTool(c invocation) {
	args := c.args
	sub := ""
	for i := 0; i < len(args); i++ {
		if !args[i].literal {
			return // opaque already
		}
		if args[i].text == "-C" {
			i++
			continue
		}
		if !strings.HasPrefix(args[i].text, "-") {
			sub, args = args[i].text, args[i+1:]
			break
		}
	}
	switch sub {
	case "run":
		r.markOpaque("go run builds and runs a program")
	case "generate":
		r.markOpaque("go generate runs the commands of //go:generate lines")
	case "tool":
		r.markOpaque("go tool runs a tool, which go.mod may name")
	case "env":
		if slices.ContainsFunc(args, func(w word) bool { return w.text == "-w" }) {
			r.markOpaque("go env -w changes go's settings for later commands")
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.literal || !strings.HasPrefix(a.text, "-") {
			continue
		}
		if a.text == "-args" || a.text == "--args" {
			return
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a.text, "-"), "=")
		if !slices.Contains(goExecFlags, name) {
			continue
		}
		program := word{text: value, literal: true}
		if !hasValue {
			if i+1 >= len(args) {
				return
			}
			i++
			program = args[i]
		}
		r.markOpaque(fmt.Sprintf("go %s -%s runs a program", sub, name))
		if !program.literal {
			r.markUnresolved(fmt.Sprintf("go %s -%s %s runs a program only known when the script runs", sub, name, program.text))
			continue
		}
		r.command(literalWords(strings.Fields(program.text)...), nil, c.sc)
	}
}

// makeAssignment is a make variable assigned on the command line.
var makeAssignment = regexp.MustCompile(`^[^-=\s][^=\s]*[:+?!]?=`)

// make makes a make run opaque when its command line changes what the
// recipes run: a variable assignment (SHELL=..., CC=..., a $(shell ...)) or
// --eval.
func (r *resolver) make(c invocation) {
	for _, a := range c.args {
		switch {
		case !a.literal:
		case makeAssignment.MatchString(a.text):
			r.markOpaque(fmt.Sprintf("make %s changes what its recipes run", a.text))
			return
		case a.text == "-E" || a.text == "--eval" || strings.HasPrefix(a.text, "--eval="):
			r.markOpaque("make --eval adds rules that run commands")
			return
		}
	}
}

// npmRunners are package-manager subcommands that run a package's scripts
// or programs.
var npmRunners = []string{"run", "run-script", "rum", "urn", "exec", "x", "dlx", "test", "t", "tst", "start", "stop",
	"restart", "explore", "create"}

// yarnBuiltins are yarn subcommands that are not a package script.
var yarnBuiltins = []string{"add", "install", "remove", "upgrade", "up", "info", "list", "why", "init", "config",
	"cache", "version", "versions", "outdated", "audit", "login", "logout", "publish", "pack", "bin", "global",
	"help", "import", "licenses", "link", "unlink", "owner", "tag", "team", "workspaces", "workspace", "policies",
	"check", "autoclean", "generate-lock-entry", "set", "plugin", "constraints", "dedupe", "explain", "npm", "patch",
	"patch-commit", "rebuild", "search", "stage", "unplug"}

// npm makes the runners of package scripts and programs opaque: npx, and
// npm, pnpm or yarn run, exec, test, start...; yarn NAME runs a script
// too. (bun is an interpreter; see interpreters.)
func (r *resolver) npm(c invocation) {
	switch c.name {
	case "npx", "pnpx", "bunx":
		r.markOpaque(c.name + " runs a package's program")
		return
	}
	for _, a := range c.args {
		if a.literal && slices.Contains(npmRunners, a.text) {
			r.markOpaque(fmt.Sprintf("%s %s runs a package's script or program", c.name, a.text))
			return
		}
	}
	if c.name == "yarn" {
		for _, a := range c.args {
			if a.literal && strings.HasPrefix(a.text, "-") {
				continue
			}
			if !a.literal || !slices.Contains(yarnBuiltins, a.text) {
				r.markOpaque(fmt.Sprintf("yarn %s runs a package script", a.text))
			}
			return
		}
	}
}
