package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
)

// runOptions are the flags of `agcore run`.
type runOptions struct {
	modelFlags
	perms          permissionFlags
	session, agent string
	jsonOut        bool
	outputSchema   string
}

// newRunCmd returns `agcore run`.
func newRunCmd(a *app) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   `run "<prompt>"`,
		Short: "Run one turn and stream it to the terminal",
		Long: `Run one turn of a session: send the prompt, stream the reply to the terminal
with a line per tool call, and exit when the turn ends.

The session is journaled in the data directory (--data-dir), so it can be
listed, replayed, exported or continued later with --session. The model,
agents, tools and permissions come from the configuration file (--config).

The MCP servers of the configuration (mcp_servers) are connected before
the turn starts, each for at most its startup_timeout (default 30s); a
server that is not ready by then is named on standard error with the
reason and its tools are left out, unless it sets required: true, which
makes it an error.

The reply goes to standard output. A turn that fails or stops at a limit
is reported once, on standard error ("agcore: turn 1 failed: ..."); turns
are numbered from 1.

Approvals. A tool call that the permission mode does not run by itself
(bash, in the default mode accept-edits) is asked about on the terminal:
the prompt shows the tool, its subject (the command line, the path) and
other arguments, and why it asks, and takes y (allow once), a (allow this
tool on this same subject until agcore exits; the same exact call when
allow rules cannot vouch for the subject alone) or n (deny; "n REASON"
tells the model why), then Enter. The live view pauses while it asks, and
parallel calls are asked one after the other. The wait is bounded by
permissions.approval_timeout (default 5m), whose time left the prompt
shows; unanswered by then, the approval expires and the call is denied.
The call's deadline (limits.tool_timeout) starts once it is approved. Without a
terminal (standard input or output redirected) such a call is refused: the
model reads the refusal as the tool's result, and standard error says once
per tool which --allow rule, --permission-mode or permissions.allow rule
would let it run.

--allow RULE and --deny RULE (repeatable) add rules to permissions.allow
and permissions.deny, in the same syntax: "bash(go test **)",
"write_file(docs/**)", "mcp__fs__*". Deny rules refuse in every mode.

Structured output. --output-schema FILE names a JSON Schema (an object
schema) the turn's final answer must match: it is asked of the model as
response_format json_schema, or through an answer tool for the providers
and agents configured with structured_output: answer_tool. An answer that
does not match is sent back to the model once with the problem. Standard
output then holds only the checked answer, as one line of JSON; the turn's
progress goes to standard error. An answer that still does not match
fails the turn, and standard error shows it as the model wrote it.

Exit codes: 0 when the turn completed, 1 when it failed or hit a limit,
2 for a usage or configuration error (a bad flag, an unknown model, a
session id that is not valid), 130 when interrupted (Ctrl-C cancels the
turn, and the cancellation is journaled).`,
		Example: `  agcore run "What does main.go do?"
  agcore run --model mock/scripted "Summarise this project"
  agcore run --session 20250102-150405-1a2b3c "And the tests?"
  agcore run --json "List the files" | jq -c 'select(.type=="tool_finished")'
  agcore run --output-schema invoice.schema.json "Extract the invoice in invoice.txt" | jq .total
  agcore run --allow 'bash(go test **)' "Run the tests and fix what fails"
  agcore run --permission-mode read-only --deny 'web_fetch' "Review main.go"
  OPENAI_BASE_URL=http://127.0.0.1:11434/v1 agcore run --model llama3.2 "Hello"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || strings.TrimSpace(args[0]) == "" {
				return &usageError{fmt.Errorf("%s takes one prompt argument, got %d arguments", cmd.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runTurn(cmd, a, o, args[0]) },
	}
	addModelFlags(cmd, &o.modelFlags)
	addPermissionFlags(cmd, &o.perms, true)
	f := cmd.Flags()
	f.StringVar(&o.session, "session", "", "session to continue (default: a new session)")
	f.StringVar(&o.agent, "agent", "", "agent profile to use for this turn (default: the session's)")
	f.BoolVar(&o.jsonOut, "json", false, "print the turn's events as JSON lines instead of text")
	f.StringVar(&o.outputSchema, "output-schema", "", "JSON Schema file the turn's final answer must match; standard output then holds only the checked JSON")
	return cmd
}

// addModelFlags adds --model, --base-url, --api-key, --workspace and
// --no-stream.
func addModelFlags(cmd *cobra.Command, f *modelFlags) {
	fs := cmd.Flags()
	fs.StringVar(&f.model, "model", "", `model to use, "provider/model" or a model of the openai provider (env OPENAI_MODEL)`)
	fs.StringVar(&f.baseURL, "base-url", "", "API root of the openai provider (env OPENAI_BASE_URL)")
	fs.StringVar(&f.apiKey, "api-key", "", "API key of the openai provider (prefer OPENAI_API_KEY: a flag shows in the process list)")
	fs.StringVar(&f.workspace, "workspace", "", "directory the file tools are confined to (default: the configuration's, or the current directory)")
	fs.BoolVar(&f.noStream, "no-stream", false, "ask the model for complete replies instead of streaming them, for endpoints that cannot stream tool calls (sets every provider's stream: false)")
}

func runTurn(cmd *cobra.Command, a *app, o runOptions, prompt string) error {
	ctx := cmd.Context()
	output, err := readOutputSchema(o.outputSchema)
	if err != nil {
		return err
	}
	cfg, err := a.loadConfig(o.perms.add(o.overrides()))
	if err != nil {
		return err
	}
	ap := a.newApprover(cmd)
	sess, id, stop, err := a.openSession(ctx, cfg, o.session, ap, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if o.agent != "" {
		if err := sess.SwitchAgent(ctx, o.agent); err != nil {
			return withStop(&usageError{fmt.Errorf("--agent: %w", err)}, stop)
		}
	}
	out := cmd.OutOrStdout()
	if output != nil && !o.jsonOut {
		// Standard output holds the answer alone.
		out = cmd.ErrOrStderr()
	}
	t := termFor(out, a.getenv)
	if !o.jsonOut {
		fmt.Fprintln(cmd.ErrOrStderr(), t.dim("session "+id))
	}
	r := newRenderer(out, cmd.ErrOrStderr(), t, o.jsonOut)
	// The questions go where the view is, except that JSON lines stay
	// alone on standard output.
	asker := newApprovalPrompt(ap, out, t, r)
	questions := newQuestionPrompt(out, cmd.ErrOrStderr(), t, r, a.redactor, ap.unaskable)
	if o.jsonOut {
		errw := cmd.ErrOrStderr()
		asker = newApprovalPrompt(ap, errw, termFor(errw, a.getenv), nil)
		questions = newQuestionPrompt(errw, errw, termFor(errw, a.getenv), nil, a.redactor, ap.unaskable)
	}
	in := turnInput{lines: newLineReader(ctx, cmd.InOrStdin()), prompt: asker, questions: questions}
	if output != nil {
		in.submit = []actors.SubmitOption{output}
	}
	end, err := playTurn(ctx, sess, messages.UserText(prompt), r, in)
	if errors.Is(err, actors.ErrConfig) {
		err = &usageError{fmt.Errorf("--output-schema %s: %w", o.outputSchema, err)}
	}
	if err == nil {
		err = turnErr(end)
	}
	if err == nil && output != nil && !o.jsonOut {
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", end.Output)
	}
	if f := end.OutputFailure; f != nil && !o.jsonOut {
		fmt.Fprintf(cmd.ErrOrStderr(), "agcore: the answer as the model wrote it:\n%s\n", f.Raw)
	}
	return withStop(err, stop)
}

// withStop stops the runtime and returns err, or the error of stopping
// when err is nil.
func withStop(err error, stop func() error) error {
	if serr := stop(); err == nil {
		return serr
	}
	return err
}
