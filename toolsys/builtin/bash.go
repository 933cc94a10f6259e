package builtin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/sandbox"
)

// maxCommandTimeout bounds the timeout a bash call may ask for.
const maxCommandTimeout = time.Hour

// envName is what an environment variable's name may look like.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// BashParams are bash's arguments.
type BashParams struct {
	Command         string            `json:"command" jsonschema:"description=The command line; run with bash -c in the workspace root"`
	TimeoutSeconds  int               `json:"timeout_seconds,omitempty" jsonschema:"description=Kill the command (and everything it started) after this many seconds. Default 120.,minimum=1,maximum=3600"`
	RunInBackground bool              `json:"run_in_background,omitempty" jsonschema:"description=Start the command in the background and return its process id at once; follow it with bash_process. Use this for servers and watchers."`
	Description     string            `json:"description,omitempty" jsonschema:"description=A few words saying what the command does"`
	Env             map[string]string `json:"env,omitempty" jsonschema:"description=Extra environment variables for the command. Values may be secret references."`
}

// Bash is the bash tool: it runs a shell command in the workspace root, in a
// process group of its own that is killed whole on timeout or cancellation,
// and returns its combined output (the tail, when long), its exit code and
// its duration. With run_in_background it hands the command to the
// ProcessManager and returns its id.
//
// The command's environment holds only PATH, HOME and LANG taken from the
// agent's own (PATH defaults to /usr/local/bin:/usr/bin:/bin and LANG to
// C.UTF-8), plus the call's env; nothing else of the agent's environment,
// such as API keys, reaches it.
//
// Commands run confined by the sandbox (Options.Sandbox): they read the
// system directories, write only the workspace and a private directory
// (their HOME and TMPDIR, removed afterwards), and connect to the allowed
// TCP ports only. Where the host cannot confine them, the description says
// so, and the sandbox's Mode refuses every call (the default) or runs the
// command unconfined.
type Bash struct {
	procs     *ProcessManager
	sandbox   *sandbox.Sandbox
	timeout   time.Duration
	maxOutput int
}

// NewBash returns bash; it uses opts.BashTimeout, opts.BashMaxOutput,
// opts.Sandbox, and procs for background commands.
func NewBash(opts Options, procs *ProcessManager) *Bash {
	o := opts.withDefaults()
	return &Bash{procs: procs, sandbox: o.sandbox(), timeout: o.BashTimeout, maxOutput: o.BashMaxOutput}
}

// Name returns "bash".
func (*Bash) Name() string { return "bash" }

// Description tells the model how to use bash, and what its commands may
// reach; the first call probes the host (see sandbox.Sandbox.Status).
func (t *Bash) Description() string {
	return "Run a shell command with bash in the workspace root and return its combined stdout and stderr " +
		"and exit code. Commands are killed after timeout_seconds (default 120). Long-running commands " +
		"(servers, watchers) belong in run_in_background; check them with bash_process. " +
		confinementText(t.sandbox)
}

// confinementText tells the model what commands may reach under sb.
func confinementText(sb *sandbox.Sandbox) string {
	st := sb.Status(context.Background())
	switch {
	case st.Confined:
		net := "They cannot open network connections."
		if ports := sb.AllowPorts(); len(ports) > 0 {
			net = fmt.Sprintf("They can open TCP connections to port %s only, and cannot listen.", joinInts(ports))
		}
		return "Commands run confined (Landlock sandbox): they can read the system directories and write only " +
			"the workspace and $TMPDIR ($HOME is also private; both are emptied after each command); the rest " +
			"of the file system, including the user's home directory, is off limits. " + net
	case sb.Mode() == sandbox.Warn:
		return "Sandbox: unconfined (" + st.Reason + "): commands can read, write and connect wherever the agent can."
	}
	return "Sandbox: unconfined (" + st.Reason + "), so every call is refused."
}

// joinInts lists ns as "80, 443".
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// Permission is PermExecute.
func (*Bash) Permission() toolsys.Permission { return toolsys.PermExecute }

// SecretParams are command and env: a command may need a token, preferably
// passed through an environment variable.
func (*Bash) SecretParams() []string { return []string{"command", "env"} }

// Idempotent is false: commands have effects.
func (*Bash) Idempotent() bool { return false }

// RuleSubject is the whole command line, as hooks and approvers see it and
// deny rules also match it.
func (*Bash) RuleSubject(p BashParams, _ *toolsys.Context) string { return p.Command }

// RuleSubjects are the commands the command line runs, resolved on the
// bash syntax tree (see scriptSubjects), each matched on its own by
// permission rules such as bash(git *): "git status; rm -rf ~" is two
// subjects, and an allow rule for git does not allow it. The variables of
// the env parameter are read as if the script exported them first, so a
// PATH or BASH_ENV among them leaves the commands unresolved (refused by
// any deny rule with a pattern), and a GIT_SSH_COMMAND or PAGER shows deny
// rules the command it holds. A call that sets env variables is Opaque:
// only the approver, or an allow rule without a pattern, can let it run.
func (*Bash) RuleSubjects(p BashParams, _ *toolsys.Context) toolsys.Subjects {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		q, err := syntax.Quote(p.Env[k], syntax.LangBash)
		if err != nil || !envName.MatchString(k) {
			return toolsys.Subjects{Parts: scriptSubjects(p.Command).Parts,
				Unresolved: fmt.Sprintf("env: %q cannot be read as a variable assignment", k)}
		}
		fmt.Fprintf(&b, "export %s=%s\n", k, q)
	}
	s := scriptSubjects(b.String() + p.Command)
	if len(p.Env) > 0 {
		s.Opaque = "the call sets environment variables (env)"
	}
	return s
}

// Precheck rejects an empty command and malformed variable names.
func (*Bash) Precheck(p BashParams) error {
	if strings.TrimSpace(p.Command) == "" {
		return errors.New("command is empty")
	}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		if !envName.MatchString(k) {
			return fmt.Errorf("env: %q is not a valid variable name", k)
		}
	}
	return nil
}

// Execute runs the command.
func (t *Bash) Execute(ctx context.Context, p BashParams, tc *toolsys.Context) (toolsys.Result, error) {
	if err := t.Precheck(p); err != nil {
		return toolsys.ErrorResult("%v", err), nil
	}
	if tc == nil || tc.Workspace == nil {
		return toolsys.ErrorResult("%v", errNoWorkspace), nil
	}
	st, err := t.sandbox.Check(ctx)
	switch {
	case errors.Is(err, sandbox.ErrUnconfined):
		return toolsys.ErrorResult("%v", err), nil
	case err != nil:
		return toolsys.Result{}, fmt.Errorf("bash: %w", err)
	}
	c := Command{Script: p.Command, Dir: tc.Workspace.Root(), Env: commandEnv(p.Env), Description: p.Description}
	if st.Confined {
		c.Sandbox = t.sandbox
	}
	if p.RunInBackground {
		return t.background(ctx, c, tc)
	}
	timeout := t.timeout
	if p.TimeoutSeconds > 0 {
		timeout = min(time.Duration(p.TimeoutSeconds)*time.Second, maxCommandTimeout)
	}
	proc, err := startProcess(ctx, "", c, t.maxOutput, tc.Logger)
	if err != nil {
		return toolsys.Result{}, fmt.Errorf("bash: %w", err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case <-proc.Done():
	case <-timer.C:
		timedOut = true
		proc.Stop()
		<-proc.Done()
	case <-ctx.Done():
		proc.Stop()
		<-proc.Done()
		return toolsys.Result{}, fmt.Errorf("bash: %w", context.Cause(ctx))
	}
	if err := proc.err(); err != nil {
		return toolsys.Result{}, fmt.Errorf("bash: %w", err)
	}
	info := proc.Info()
	out, omitted := proc.out.tail(t.maxOutput)
	text := strings.ToValidUTF8(string(out), "\uFFFD")
	if omitted > 0 {
		text = fmt.Sprintf("[%d bytes of earlier output omitted]\n%s", omitted, text)
	}
	meta := map[string]any{
		"exit_code":   info.ExitCode,
		"timed_out":   timedOut,
		"duration_ms": info.Duration.Milliseconds(),
	}
	tc.Logger.Debug().Int("exit_code", info.ExitCode).Bool("timed_out", timedOut).Dur("duration", info.Duration).Msg("bash")
	switch {
	case timedOut:
		return toolsys.Result{Content: joinOutput(fmt.Sprintf("Command timed out after %s and was killed.", timeout), text), IsError: true, Metadata: meta}, nil
	case info.ExitCode != 0:
		return toolsys.Result{Content: joinOutput(exitText(info.ExitCode), text), IsError: true, Metadata: meta}, nil
	case text == "":
		return toolsys.Result{Content: "(no output)", Metadata: meta}, nil
	}
	return toolsys.Result{Content: text, Metadata: meta}, nil
}

// background starts c in the process manager.
func (t *Bash) background(ctx context.Context, c Command, tc *toolsys.Context) (toolsys.Result, error) {
	if t.procs == nil {
		return toolsys.ErrorResult("background commands are not available"), nil
	}
	proc, err := t.procs.Start(ctx, c)
	switch {
	case errors.Is(err, ErrTooManyProcesses):
		return toolsys.ErrorResult("%v; stop one with bash_process first", err), nil
	case errors.Is(err, ErrManagerClosed):
		return toolsys.ErrorResult("background commands are no longer accepted (shutting down)"), nil
	case err != nil:
		return toolsys.Result{}, fmt.Errorf("bash: %w", err)
	}
	tc.Logger.Debug().Str("process", proc.ID()).Int("pid", proc.PID()).Msg("bash started in background")
	return toolsys.Result{
		Content:  fmt.Sprintf("Started background process %s (pid %d). Read its output with bash_process process_id=%s.", proc.ID(), proc.PID(), proc.ID()),
		Metadata: map[string]any{"process_id": proc.ID(), "pid": proc.PID()},
	}, nil
}

// exitText says how a command ended unsuccessfully.
func exitText(code int) string {
	if code < 0 {
		return "Command was killed by a signal."
	}
	return fmt.Sprintf("Command failed with exit code %d.", code)
}

// joinOutput puts a status line above a command's output.
func joinOutput(status, output string) string {
	if output == "" {
		return status
	}
	return status + "\n" + output
}

// commandEnv builds a command's environment: PATH, HOME and LANG from the
// agent's own environment (with defaults for PATH and LANG), then extra in
// name order. A name in extra overrides the inherited one.
func commandEnv(extra map[string]string) []string {
	env := []string{
		"PATH=" + getenvDefault("PATH", "/usr/local/bin:/usr/bin:/bin"),
		"LANG=" + getenvDefault("LANG", "C.UTF-8"),
	}
	if home := os.Getenv("HOME"); home != "" {
		env = append(env, "HOME="+home)
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// getenvDefault returns the environment variable key, or def when it is unset
// or empty.
func getenvDefault(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
