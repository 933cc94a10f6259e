package main

import (
	"cmp"
	"fmt"
	"os"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/agcore/agcore/internal/logging"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
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
}

// newDemoCmd returns `agcore demo`.
func newDemoCmd(a *app) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a streamed conversation with tool calls, offline",
		Long: `Run a real conversation with tool calls over HTTP, and print it as it streams.

By default the demo starts the embedded mock LLM on a free loopback port and
talks to it through the OpenAI-compatible provider: no API key and no network
are needed. The model explores a small sample project in a temporary
workspace with the built-in file tools (reading two files with parallel
calls), writes SUMMARY.md there, and answers. Tool calls run locally,
confined to the workspace; the results go back to the model in call order.

With --base-url (or OPENAI_BASE_URL) the same conversation runs against that
endpoint instead, with --api-key (or OPENAI_API_KEY) and --model (or
OPENAI_MODEL, default ` + defaultRealModel + `). The API key is never printed or logged.`,
		Example: `  agcore demo
  agcore demo --workspace ./scratch
  OPENAI_API_KEY=sk-... agcore demo --base-url https://api.openai.com/v1 --model gpt-4o-mini
  agcore demo --base-url http://127.0.0.1:11434/v1 --model llama3.2 --prompt "What does main.go do?"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.baseURL == "" {
				o.baseURL = a.getenv("OPENAI_BASE_URL")
			}
			if o.apiKey == "" {
				o.apiKey = a.getenv("OPENAI_API_KEY")
			}
			if o.model == "" {
				o.model = a.getenv("OPENAI_MODEL")
			}
			if o.maxSteps < 1 {
				return &usageError{fmt.Errorf("--max-steps must be at least 1, got %d", o.maxSteps)}
			}
			return runDemo(cmd, a.log, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.baseURL, "base-url", "", "OpenAI-compatible API root to talk to instead of the mock LLM (env OPENAI_BASE_URL)")
	f.StringVar(&o.apiKey, "api-key", "", "API key for --base-url (env OPENAI_API_KEY, preferred: a flag shows in the process list)")
	f.StringVar(&o.model, "model", "", "model to ask (env OPENAI_MODEL; default "+defaultRealModel+", or the mock's model)")
	f.StringVar(&o.prompt, "prompt", defaultDemoPrompt, "what to ask the model")
	f.StringVar(&o.workspace, "workspace", "", "directory to work in, kept afterwards (seeded with a sample project when empty); default a temporary one")
	f.IntVar(&o.maxSteps, "max-steps", defaultDemoSteps, "most model calls before giving up")
	return cmd
}

// runDemo runs the demo conversation described by o. base is the root
// logger; each part of the demo logs under a component of its own.
func runDemo(cmd *cobra.Command, base zerolog.Logger, o demoOptions) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	log := component(base, "demo")

	endpoint := logging.Redact(o.baseURL)
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

	ws, files, cleanup, err := openWorkspace(o.workspace)
	if err != nil {
		return err
	}
	defer cleanup()
	reg, err := fileTools(base) // the registry names its own component
	if err != nil {
		return err
	}
	provider, err := openai.New(openai.Options{
		BaseURL: o.baseURL, APIKey: o.apiKey, Model: o.model, Logger: component(base, "openai"),
	})
	if err != nil {
		return err
	}

	p := &printer{w: out}
	p.note("agcore demo · model %s at %s", o.model, endpoint)
	p.note("workspace %s: %s", ws.Root(), strings.Join(files, ", "))
	p.note("\n> %s\n", o.prompt)
	c := &conversation{
		provider: provider, model: o.model, out: p, maxSteps: o.maxSteps, log: log,
		tools: &toolbox{reg: reg, workspace: ws, session: "demo", log: log},
		usage: &providers.Tracker{},
	}
	_, err = c.run(ctx, []messages.Message{messages.SystemText(demoSystemPrompt), messages.UserText(o.prompt)})
	if snap := c.usage.Snapshot(); len(snap.Models) > 0 {
		var calls int64
		for _, m := range snap.Models {
			calls += m.Calls
		}
		p.note("\nusage: %d model calls · %d prompt + %d completion = %d tokens",
			calls, snap.Usage.PromptTokens, snap.Usage.CompletionTokens, snap.Usage.TotalTokens)
	}
	if err != nil {
		return err
	}
	if o.workspace != "" {
		p.note("workspace kept at %s", ws.Root())
	}
	return p.err
}

// openWorkspace opens dir as the demo's workspace, creating it when missing,
// or a new temporary directory when dir is empty, and seeds it with the
// sample project when it is empty. cleanup removes a temporary workspace and
// keeps a named one.
func openWorkspace(dir string) (ws *toolsys.Workspace, files []string, cleanup func(), err error) {
	cleanup = func() {}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "agcore-demo-"); err != nil {
			return nil, nil, nil, fmt.Errorf("workspace: %w", err)
		}
		tmp := dir
		cleanup = func() { _ = os.RemoveAll(tmp) }
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, fmt.Errorf("workspace: %w", err)
	}
	if files, err = seedWorkspace(dir); err == nil {
		ws, err = toolsys.NewWorkspace(dir)
	}
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	return ws, files, cleanup, nil
}
