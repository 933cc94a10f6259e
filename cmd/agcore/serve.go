package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/internal/logging"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/openai"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// The server's defaults.
const (
	defaultServeAddr     = "127.0.0.1:8080"
	defaultShutdownAfter = 30 * time.Second
)

// serveOptions are the serve command's flags, with the environment filled
// in.
type serveOptions struct {
	addr, token, dataDir   string
	baseURL, apiKey, model string
	workspace, permissions string
	maxBody                int64
	shutdownTimeout        time.Duration
}

// newServeCmd returns `agcore serve`.
func newServeCmd(a *app) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the runtime over an HTTP API with Server-Sent Events",
		Long: `Serve an agcore runtime over HTTP: create and list sessions, run turns with
their events streamed as Server-Sent Events (or awaited as JSON), cancel a
turn, answer tool-call approvals, read history and usage, and scrape
Prometheus metrics at /metrics. /healthz and /readyz answer health probes.

Sessions are journaled in --data-dir and survive restarts. By default the
model is the embedded mock LLM (offline, no API key); with --base-url (or
OPENAI_BASE_URL) it is that OpenAI-compatible endpoint, with --api-key (or
OPENAI_API_KEY) and --model (or OPENAI_MODEL).

The file tools work in --workspace. In the default "ask" permission mode a
tool that writes waits for an answer: it shows up as an approval_pending
event and in GET /v1/sessions/{id}/approvals, and
POST /v1/sessions/{id}/approvals/{call_id} {"allow": true} lets it run.

With --token (or AGCORE_TOKEN) every request except the health probes must
carry "Authorization: Bearer <token>". On SIGINT or SIGTERM the server stops
accepting requests, lets running turns finish for up to --shutdown-timeout,
cancels the rest, and flushes the journal.`,
		Example: `  agcore serve
  agcore serve --addr 127.0.0.1:9000 --token "$(openssl rand -hex 16)" --data-dir ./data
  curl -s -X POST localhost:8080/v1/sessions -d '{"id":"s1"}'
  curl -N -H 'Accept: text/event-stream' localhost:8080/v1/sessions/s1/turns -d '{"input":"Summarise the project"}'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.baseURL = cmp.Or(o.baseURL, a.getenv("OPENAI_BASE_URL"))
			o.apiKey = cmp.Or(o.apiKey, a.getenv("OPENAI_API_KEY"))
			o.model = cmp.Or(o.model, a.getenv("OPENAI_MODEL"))
			o.token = cmp.Or(o.token, a.getenv("AGCORE_TOKEN"))
			if o.dataDir == "" {
				dir, err := serveDataDir(a.getenv)
				if err != nil {
					return err
				}
				o.dataDir = dir
			}
			if o.maxBody < 0 {
				return &usageError{fmt.Errorf("--max-body must not be negative, got %d", o.maxBody)}
			}
			return runServe(cmd, a.log, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", defaultServeAddr, "address to listen on (port 0 picks a free port)")
	f.StringVar(&o.token, "token", "", "bearer token required of every request but the health probes (env AGCORE_TOKEN, preferred)")
	f.StringVar(&o.dataDir, "data-dir", "", "directory of the session journal (default $XDG_DATA_HOME/agcore, or ~/.local/share/agcore)")
	f.StringVar(&o.baseURL, "base-url", "", "OpenAI-compatible API root to talk to instead of the mock LLM (env OPENAI_BASE_URL)")
	f.StringVar(&o.apiKey, "api-key", "", "API key for --base-url (env OPENAI_API_KEY, preferred: a flag shows in the process list)")
	f.StringVar(&o.model, "model", "", "model to ask (env OPENAI_MODEL; default "+defaultRealModel+", or the mock's model)")
	f.StringVar(&o.workspace, "workspace", "", "directory the file tools work in (seeded with a sample project when empty); default a temporary one")
	f.StringVar(&o.permissions, "permission-mode", "ask", "tool permission mode: ask, accept-edits, read-only or bypass")
	f.Int64Var(&o.maxBody, "max-body", httpapi.DefaultMaxBodyBytes, "largest request body, in bytes")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", defaultShutdownAfter, "how long running turns may finish at shutdown before they are cancelled")
	return cmd
}

// serveDataDir is the default data directory: $XDG_DATA_HOME/agcore, or
// ~/.local/share/agcore.
func serveDataDir(getenv func(string) string) (string, error) {
	if dir := getenv("XDG_DATA_HOME"); dir != "" {
		return filepath.Join(dir, "agcore"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("data directory: %w; set --data-dir", err)
		}
	}
	return filepath.Join(home, ".local", "share", "agcore"), nil
}

// runServe serves the API until cmd's context ends, then shuts down
// gracefully.
func runServe(cmd *cobra.Command, base zerolog.Logger, o serveOptions) (err error) {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	log := component(base, "serve")
	mode, err := toolsys.ParseMode(o.permissions)
	if err != nil {
		return &usageError{fmt.Errorf("--permission-mode: %w", err)}
	}

	endpoint := logging.Redact(o.baseURL)
	if o.baseURL == "" {
		model, err := scripted.New(scripted.Demo(), scripted.Options{Logger: component(base, "scripted")})
		if err != nil {
			return err
		}
		mock, err := mockllm.Start(ctx, "127.0.0.1:0", mockllm.Config{Provider: model, Logger: component(base, "mock-llm")})
		if err != nil {
			return err
		}
		defer mock.Close()
		o.baseURL, o.apiKey = mock.URL(), ""
		o.model = cmp.Or(o.model, mockllm.DefaultModel)
		endpoint = mock.URL() + " (embedded mock LLM)"
	}
	o.model = cmp.Or(o.model, defaultRealModel)
	provider, err := openai.New(openai.Options{BaseURL: o.baseURL, APIKey: o.apiKey, Model: o.model, Logger: component(base, "openai")})
	if err != nil {
		return err
	}

	ws, _, cleanup, err := openWorkspace(o.workspace)
	if err != nil {
		return err
	}
	defer cleanup()
	metrics := &httpapi.Metrics{}
	tools, err := serveTools(base, mode)
	if err != nil {
		return err
	}

	if err := os.MkdirAll(o.dataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	store, err := memory.Open(memory.Options{Dir: o.dataDir, Logger: component(base, "store")})
	if err != nil {
		return fmt.Errorf("data directory %s: %w", o.dataDir, err)
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	journal, err := memory.NewJournal(store, memory.JournalOptions{Logger: component(base, "journal")})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, journal.Close()) }()

	var hooks actors.Hooks
	metrics.RegisterHooks(&hooks)
	rt, err := actors.New(actors.Config{
		Journal: journal, SessionMemory: memory.NewSessionMemory(store, memory.SessionMemoryOptions{}),
		Provider: provider, Model: o.model,
		Tools: tools, Workspace: ws, Hooks: hooks, BasePrompt: demoSystemPrompt, Approver: actors.ManualApprover(),
		Logger: component(base, "runtime"),
	})
	if err != nil {
		return err
	}
	srv, err := httpapi.New(httpapi.Config{
		Runtime: rt, Journal: journal, Tools: tools, Metrics: metrics,
		Token: o.token, MaxBodyBytes: o.maxBody, Logger: base,
	})
	if err != nil {
		_ = rt.Shutdown(context.WithoutCancel(ctx))
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		_ = srv.Shutdown(context.WithoutCancel(ctx))
		return fmt.Errorf("listen: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	fmt.Fprintf(out, "agcore API listening on http://%s\n", ln.Addr())
	fmt.Fprintf(out, "model %s at %s · data %s · workspace %s · permissions %s\n", o.model, endpoint, o.dataDir, ws.Root(), mode)
	if o.token != "" {
		fmt.Fprintln(out, "bearer token required")
	}
	log.Info().Str("addr", ln.Addr().String()).Msg("serving; interrupt to stop")

	select {
	case <-ctx.Done():
	case err := <-served:
		_ = srv.Shutdown(context.WithoutCancel(ctx))
		return fmt.Errorf("serve: %w", err)
	}
	log.Info().Dur("timeout", o.shutdownTimeout).Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if err := <-served; !errors.Is(err, httpapi.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(out, "agcore API stopped")
	return nil
}

// serveTools returns the file tools behind a permission pipeline in mode
// (calls that need approval wait for the API's answer, through the runtime).
func serveTools(log zerolog.Logger, mode toolsys.Mode) (*toolsys.Registry, error) {
	files, err := fileTools(log, nil) // only the tools; perms below guard them
	if err != nil {
		return nil, err
	}
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: mode})
	if err != nil {
		return nil, err
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms, Logger: log})
	for _, t := range files.List() {
		if err := reg.Register(t, toolsys.WithCategory("files")); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
