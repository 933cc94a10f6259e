package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/openai"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// The demo's defaults.
const (
	// defaultDemoPrompt is the user's request when --prompt is not given.
	defaultDemoPrompt = "Look around this project and write a short summary of it to SUMMARY.md."
	// defaultRealModel is the model asked of a real endpoint when neither
	// --model nor OPENAI_MODEL names one.
	defaultRealModel = "gpt-4o-mini"
	// defaultDemoSteps caps the model calls of the demo.
	defaultDemoSteps = 10
	// defaultDemoSessions is how many sessions the demo runs at once.
	defaultDemoSessions = 4
	// maxDemoSessions bounds --sessions.
	maxDemoSessions = 1000
	// demoSystemPrompt tells the model what it is doing.
	demoSystemPrompt = "You are a concise coding assistant. You work on a project through the tools you " +
		"are given; paths are relative to the project root. Look before you answer, call independent " +
		"tools in parallel, and keep your answers short."
)

// demoOptions are the demo's flags, with the environment filled in.
type demoOptions struct {
	baseURL, apiKey, model string
	prompt, workspace      string
	maxSteps               int
	sessions, turns        int
	jsonOut                bool
}

// newDemoCmd returns `agcore demo`.
func newDemoCmd(a *app) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run several agent sessions at once, offline, with a live view",
		Long: `Run several sessions at once on the agcore runtime and watch them live.

By default the demo starts the embedded mock LLM on a free loopback port and
talks to it over HTTP through the OpenAI-compatible provider: no API key and
no network are needed. Each session explores a small sample project in a
temporary workspace with the built-in file tools (the mock reads two files
with parallel tool calls), writes SUMMARY.md there, and answers. Sessions
are actors: they run concurrently, each tool call in its own child with its
own deadline, and the results go back to the model in call order.

On a terminal each session has a line, updated in place; otherwise each
event of note is printed as a plain line. A summary table ends the run.
The exit code is 0 when every session completed, 1 otherwise, 130 when
interrupted.

With --base-url (or OPENAI_BASE_URL) the sessions talk to that endpoint
instead, with --api-key (or OPENAI_API_KEY) and --model (or OPENAI_MODEL,
default ` + defaultRealModel + `). The API key is never printed or logged.

The workspace is kept afterwards, a temporary one included: the last line
names it and lists its files, SUMMARY.md among them.`,
		Example: `  agcore demo
  agcore demo --sessions 16 --turns 2
  agcore demo --json | jq -c 'select(.type=="turn_ended")'
  OPENAI_API_KEY=sk-... agcore demo --sessions 2 --base-url https://api.openai.com/v1 --model gpt-4o-mini
  agcore demo --base-url http://127.0.0.1:11434/v1 --model llama3.2 --prompt "What does main.go do?"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.baseURL = cmp.Or(o.baseURL, a.getenv("OPENAI_BASE_URL"))
			o.apiKey = cmp.Or(o.apiKey, a.getenv("OPENAI_API_KEY"))
			o.model = cmp.Or(o.model, a.getenv("OPENAI_MODEL"))
			for _, c := range []struct {
				flag string
				v    int
			}{{"--max-steps", o.maxSteps}, {"--sessions", o.sessions}, {"--turns", o.turns}} {
				if c.v < 1 {
					return &usageError{fmt.Errorf("%s must be at least 1, got %d", c.flag, c.v)}
				}
			}
			if o.sessions > maxDemoSessions {
				return &usageError{fmt.Errorf("--sessions must be at most %d, got %d", maxDemoSessions, o.sessions)}
			}
			return runDemo(cmd, a, o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.sessions, "sessions", defaultDemoSessions, "how many sessions run at once")
	f.IntVar(&o.turns, "turns", 1, "turns per session, one after the other")
	f.StringVar(&o.baseURL, "base-url", "", "OpenAI-compatible API root to talk to instead of the mock LLM (env OPENAI_BASE_URL)")
	f.StringVar(&o.apiKey, "api-key", "", "API key for --base-url (env OPENAI_API_KEY, preferred: a flag shows in the process list)")
	f.StringVar(&o.model, "model", "", "model to ask (env OPENAI_MODEL; default "+defaultRealModel+", or the mock's model)")
	f.StringVar(&o.prompt, "prompt", defaultDemoPrompt, "what each session asks the model")
	f.StringVar(&o.workspace, "workspace", "", "directory the sessions share, kept afterwards (seeded with a sample project when empty); default a new temporary one, also kept")
	f.IntVar(&o.maxSteps, "max-steps", defaultDemoSteps, "most model calls of one turn")
	f.BoolVar(&o.jsonOut, "json", false, "print every event as a JSON line, then a summary line")
	return cmd
}

// runDemo runs the demo described by o.
func runDemo(cmd *cobra.Command, a *app, o demoOptions) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	base := a.log
	a.redactor.Add(o.apiKey, "")
	endpoint := a.redactor.String(o.baseURL)
	if o.baseURL == "" {
		model, err := scripted.New(scripted.Demo(), scripted.Options{Logger: component(base, "scripted")})
		if err != nil {
			return err
		}
		srv, err := mockllm.Start(ctx, "127.0.0.1:0", mockllm.Config{Provider: model, Logger: component(base, "mock-llm")})
		if err != nil {
			return err
		}
		defer srv.Close()
		o.baseURL, o.apiKey = srv.URL(), ""
		o.model = cmp.Or(o.model, mockllm.DefaultModel)
		endpoint = srv.URL() + " (embedded mock LLM)"
	}
	o.model = cmp.Or(o.model, defaultRealModel)

	ws, files, closeWS, err := openWorkspace(o.workspace, a.getenv("TMPDIR"))
	if err != nil {
		return err
	}
	// Once the sessions run, the workspace holds what they wrote and the
	// output names it: it is kept, a temporary one included.
	keep := false
	defer func() { closeWS(keep) }()
	// The demo's file tools stay in its workspace, and writing SUMMARY.md
	// there is the point: accept-edits runs them without an approver.
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeAcceptEdits})
	if err != nil {
		return err
	}
	reg, err := fileTools(component(base, "tools"), perms)
	if err != nil {
		return err
	}
	provider, err := openai.New(openai.Options{
		BaseURL: o.baseURL, APIKey: o.apiKey, Model: o.model, Logger: component(base, "openai"), Redactor: a.redactor,
	})
	if err != nil {
		return err
	}
	tel, err := a.setupOTel(ctx, false)
	if err != nil {
		return err
	}
	defer tel.close(ctx, base) // after the runtime's shutdown, so that its last spans are flushed
	rc := actors.Config{
		Provider: provider, Model: o.model, Tools: reg, Workspace: ws,
		BasePrompt: demoSystemPrompt, Limits: actors.Limits{MaxRoundTrips: o.maxSteps},
		Logger: runtimeLogger(base),
	}
	tel.apply(&rc)
	rt, err := actors.NewInMemory(rc)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		_ = rt.Shutdown(sctx)
	}()

	t := termFor(out, a.getenv)
	v := newDemoView(out, t, o.jsonOut, o.sessions)
	v.workspace, keep = ws.Root(), true
	if !o.jsonOut {
		v.write(fmt.Sprintf("agcore demo · %d sessions × %d turn%s · model %s at %s\n", o.sessions, o.turns, plural(o.turns), o.model, endpoint))
		v.write(fmt.Sprintf("workspace %s: %s\n", ws.Root(), strings.Join(files, ", ")))
		v.write(fmt.Sprintf("> %s\n\n", printable(o.prompt)))
	}
	err = v.play(ctx, rt, o.prompt, o.turns)
	if !o.jsonOut {
		kept, lerr := listWorkspace(ws.Root())
		if lerr == nil {
			v.write(fmt.Sprintf("workspace kept at %s: %s\n", ws.Root(), strings.Join(kept, ", ")))
		}
	}
	return cmp.Or(err, v.err)
}

// openWorkspace opens dir as the workspace of the demo (or of serve
// without a configuration file), creating it when missing, or a new
// directory under tmp (the system's temporary directory when empty) when
// dir is empty, and seeds it with the sample project when it is empty.
// closeWS closes the workspace and, unless keep is true, removes a
// directory it created under tmp; a named directory is always kept.
func openWorkspace(dir, tmp string) (ws *toolsys.Workspace, files []string, closeWS func(keep bool), err error) {
	remove := func() {}
	if dir == "" {
		if dir, err = os.MkdirTemp(tmp, "agcore-demo-"); err != nil {
			return nil, nil, nil, fmt.Errorf("workspace: %w", err)
		}
		created := dir
		remove = func() { _ = os.RemoveAll(created) }
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, fmt.Errorf("workspace: %w", err)
	}
	if files, err = seedWorkspace(dir); err == nil {
		ws, err = toolsys.NewWorkspace(dir)
	}
	if err != nil {
		remove()
		return nil, nil, nil, err
	}
	return ws, files, func(keep bool) {
		_ = ws.Close()
		if !keep {
			remove()
		}
	}, nil
}
