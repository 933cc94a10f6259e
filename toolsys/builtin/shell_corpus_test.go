package builtin

import (
	"testing"

	"github.com/agcore/agcore/toolsys"
)

// corpusAllow are the allow rules of the corpus: programs a user might let
// a model run, wrappers and shells among them, so that the corpus shows an
// allow rule on the outer program never vouches for what it runs. In allow
// rules '*' stops at '/', so go's rule is written with "**" to take
// ./... as an argument.
var corpusAllow = []string{
	"bash(git *)", "bash(ls *)", "bash(echo *)", "bash(go **)", "bash(cat *)", "bash(head *)", "bash(find *)",
	"bash(xargs *)", "bash(python3 *)", "bash(make *)", "bash(npm *)", "bash(awk *)", "bash(env *)", "bash(nice *)",
	"bash(bash *)", "bash(sudo *)", "bash(command *)", "bash(timeout **)",
}

// TestBash_RuleCorpus runs each command through the real permission
// pipeline with the bash tool's own subjects, under a deny rule (in bypass
// mode, so "allow" means the command runs) and under the corpus's allow
// rules (in ask mode with an approver that refuses, so "ask" means a human
// is asked and the command does not run unasked).
func TestBash_RuleCorpus(t *testing.T) {
	tests := []struct {
		command   string
		deny      []string // nil: bash(rm *)
		wantDeny  string   // under the deny rule: "deny" or "allow"
		wantAllow string   // under corpusAllow: "allow" or "ask"
	}{
		// the reported bypasses of bash(rm *) and bash(git *)
		{"X=1 rm -f v", nil, "deny", "ask"},
		{"command rm -f v", nil, "deny", "ask"},
		{"exec rm -f v", nil, "deny", "ask"},
		{"env rm -f v", nil, "deny", "ask"},
		{"nice rm -f v", nil, "deny", "ask"},
		{"/bin/rm -f v", nil, "deny", "ask"},
		{"echo 'rm -f v' | bash", nil, "deny", "ask"},
		{"bash <<< 'rm -f v'", nil, "deny", "ask"},
		{"/usr/bin/env bash -c 'rm -f v'", nil, "deny", "ask"},
		{"$(echo rm) -f v", nil, "deny", "ask"},
		{"a=rm; $a -f v", nil, "deny", "ask"},
		{"git -c alias.x='!touch pwned' x", nil, "allow", "ask"},
		// quoting, escapes and line continuations
		{`r''m -f v`, nil, "deny", "ask"},
		{`"rm" -f v`, nil, "deny", "ask"},
		{`\rm -f v`, nil, "deny", "ask"},
		{`$'\x72m' -f v`, nil, "deny", "ask"},
		{"r\\\nm -f v", nil, "deny", "ask"},
		{"rm \\\n  -f v", nil, "deny", "ask"},
		// every place a command can hide
		{"{ rm -f v; }", nil, "deny", "ask"},
		{"(rm -f v)", nil, "deny", "ask"},
		{"if true; then rm -f v; fi", nil, "deny", "ask"},
		{`for f in *; do rm "$f"; done`, nil, "deny", "ask"},
		{"while false; do :; done; rm -f v", nil, "deny", "ask"},
		{"case v in v) rm -f v;; esac", nil, "deny", "ask"},
		{"$(rm -f v)", nil, "deny", "ask"},
		{"echo `rm -f v`", nil, "deny", "ask"},
		{"echo <(rm -f v)", nil, "deny", "ask"},
		{"cat >(rm -f v)", nil, "deny", "ask"},
		{"coproc rm -f v", nil, "deny", "ask"},
		{"time rm -f v", nil, "deny", "ask"},
		{"f() { rm -f v; }; f", nil, "deny", "ask"},
		{"echo $((1+2))", nil, "allow", "ask"},
		{"x='a[$(rm -f v)]'; echo $((x))", nil, "deny", "ask"},
		// wrappers, with their own options
		{"sudo rm -f v", nil, "deny", "ask"},
		{"sudo -u root rm -f v", nil, "deny", "ask"},
		{"doas rm -f v", nil, "deny", "ask"},
		{"env -i -u X FOO=1 rm -f v", nil, "deny", "ask"},
		{"env -S 'rm -f v'", nil, "deny", "ask"},
		{"timeout -s KILL 5 rm -f v", nil, "deny", "ask"},
		{"nice -n 5 rm -f v", nil, "deny", "ask"},
		{"nohup rm -f v", nil, "deny", "ask"},
		{"stdbuf -oL rm -f v", nil, "deny", "ask"},
		{"setsid rm -f v", nil, "deny", "ask"},
		{"busybox rm -f v", nil, "deny", "ask"},
		{"watch -n 1 rm -f v", nil, "deny", "ask"},
		{"find . -delete", nil, "deny", "ask"},
		{`find . -name '*.tmp' -exec rm {} \;`, nil, "deny", "ask"},
		{`find . -exec sh -c 'rm -f "$1"' _ {} \;`, nil, "deny", "ask"},
		{"ls | xargs rm", nil, "deny", "ask"},
		{"xargs -0 -n1 rm < list", nil, "deny", "ask"},
		{"echo v | xargs -I{} rm {}", nil, "deny", "ask"},
		// shell code handed to a shell or to eval
		{"eval 'rm -f v'", nil, "deny", "ask"},
		{"builtin eval 'rm -f v'", nil, "deny", "ask"},
		{"trap 'rm -f v' EXIT", nil, "deny", "ask"},
		{`sh -c "rm -f v"`, nil, "deny", "ask"},
		{"bash -lc 'rm -f v'", nil, "deny", "ask"},
		{"zsh -c 'rm -f v'", nil, "deny", "ask"},
		{"bash -c 'alias r=rm; r -f v'", nil, "deny", "ask"},
		{"cat script | bash", nil, "deny", "ask"},
		{"source script.sh", nil, "deny", "ask"},
		// settings that make an allowed program run a command
		{"git -c core.pager='rm -f v' log", nil, "deny", "ask"},
		{"git -c alias.x='!rm -f v' x", nil, "deny", "ask"},
		{"git -c core.sshCommand='rm -f v' fetch", nil, "deny", "ask"},
		{"git -c core.hooksPath=/tmp/h commit", nil, "deny", "ask"},
		{"git -c core.fsmonitor='rm -f v' status", nil, "deny", "ask"},
		{"git --exec-path=/tmp/x status", nil, "deny", "ask"},
		{"git rebase -x 'rm -f v' main", nil, "deny", "ask"},
		{"GIT_SSH_COMMAND='rm -f v' git fetch", nil, "deny", "ask"},
		{"PATH=/tmp/x:$PATH ls", nil, "deny", "ask"},
		{"go test -exec 'rm -f v' ./...", nil, "deny", "ask"},
		// escapes whose code the rules do not read: never allowed unasked,
		// and denied only by a rule on the program itself
		{"python3 -c 'import os; os.remove(\"v\")'", nil, "allow", "ask"},
		{"python3 -c 'import os; os.remove(\"v\")'", []string{"bash(python*)"}, "deny", "ask"},
		{"echo 'print(1)' | python3", []string{"bash(python*)"}, "deny", "ask"},
		{"echo x | bash", []string{"bash(bash *)"}, "deny", "ask"},
		{"awk 'BEGIN { system(\"rm -f v\") }'", nil, "allow", "ask"},
		{"make CC='rm -f v'", nil, "allow", "ask"},
		{"npm run clean", nil, "allow", "ask"},
		{"npx rimraf v", nil, "allow", "ask"},
		{"go run ./cmd/x", nil, "allow", "ask"},
		{"bash script.sh", nil, "allow", "ask"},
		// an allow rule on a wrapper or a shell vouches only with the
		// commands inside
		{"bash -c 'git status'", nil, "allow", "allow"},
		{"env FOO=1 git status", nil, "allow", "allow"},
		{"nice git status", nil, "allow", "allow"},
		{"timeout 5 go test ./...", nil, "allow", "allow"},
		{"sudo -l", nil, "allow", "allow"},
		{"command -v rm", nil, "allow", "allow"},
		// benign commands stay allowed
		{"git status", nil, "allow", "allow"},
		{"ls -la", nil, "allow", "allow"},
		{"go test ./...", nil, "allow", "allow"},
		{`echo "rm is a word"`, nil, "allow", "allow"},
		{"echo rm", nil, "allow", "allow"},
		{"git commit -m 'rm -f v'", nil, "allow", "allow"},
		{"git log --oneline | head -5", nil, "allow", "allow"},
		{"cat README.md", nil, "allow", "allow"},
		{"find . -name '*.go'", nil, "allow", "allow"},
		{"git -c color.ui=always log", nil, "allow", "allow"},
		{"rmdir d", nil, "allow", "ask"},
		{"ls *.go", nil, "allow", "ask"},
		{"git status > out.txt", nil, "allow", "ask"},
		{"echo 'rm -f v' > notes.txt", nil, "allow", "ask"},
	}
	if len(tests) < 60 {
		t.Fatalf("the corpus has %d commands, want at least 60", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			deny := tt.deny
			if deny == nil {
				deny = []string{"bash(rm *)"}
			}
			p := BashParams{Command: tt.command}
			if got, err := decide(t, toolsys.PermissionConfig{Mode: toolsys.ModeBypass, Deny: deny}, p); got != tt.wantDeny {
				t.Errorf("under deny %q: %s (%v), want %s", deny, got, err, tt.wantDeny)
			}
			if got, err := decide(t, toolsys.PermissionConfig{Allow: corpusAllow}, p); got != tt.wantAllow {
				t.Errorf("under the allow rules: %s (%v), want %s", got, err, tt.wantAllow)
			}
		})
	}
}
