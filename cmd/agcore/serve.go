package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// The server's defaults.
const (
	defaultServeAddr     = "127.0.0.1:8080"
	defaultShutdownAfter = 30 * time.Second
)

// serveOptions are the serve command's flags.
type serveOptions struct {
	addr, token, dataDir   string
	baseURL, apiKey, model string
	workspace, permissions string
	// perms holds the --allow and --deny rules.
	perms           permissionFlags
	maxBody         int64
	shutdownTimeout time.Duration
	// insecureNoAuth serves an address other hosts can reach without a
	// token.
	insecureNoAuth bool
	// The HTTP settings; zero values are the server's defaults.
	corsOrigins, allowedHosts                   []string
	readHeaderTimeout, bodyTimeout, idleTimeout time.Duration
	maxConnections                              int
	// cluster makes the server a member of a cluster (serve_cluster.go).
	cluster serveClusterOptions
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

The runtime is the one agcore run builds, from the same configuration file
(--config): providers and default model, agents, limits, retries,
permissions, the sandbox of bash, the file tools, MCP servers, data_dir and
workspace. --model, --base-url, --api-key, --workspace, --data-dir and
--permission-mode override the file as they do for run, --allow and --deny
add rules to permissions.allow and permissions.deny, and so do
OPENAI_BASE_URL, OPENAI_MODEL, OPENAI_API_KEY and AGCORE_DATA_DIR. Sessions
are journaled in the data directory and survive restarts.

Without a configuration file, the model is the embedded mock LLM (offline,
no API key) unless --base-url (or OPENAI_BASE_URL) names an
OpenAI-compatible endpoint, and the workspace is a temporary directory
seeded with a sample project (removed at exit) unless --workspace names one.

Approvals. A tool call that the permission mode does not let run by itself
waits for an answer through the API: it shows up as an approval_pending
event and in GET /v1/sessions/{id}/approvals, and
POST /v1/sessions/{id}/approvals/{call_id} {"allow": true} lets it run. The
mode is --permission-mode, else permissions.mode of the configuration
file, else ask (tools that only read run; the others wait).

MCP authorization. An MCP server behind OAuth with no stored token is
listed by GET /v1/mcp/authorizations and on the console's sessions page,
with its authorization URL. The browser comes back to a listener on
127.0.0.1 of this machine: open the URL here, or forward that port.

Schedules. serve fires the cron schedules of the data directory (agcore
schedule add, the /v1/schedules routes, or the agents' schedule tools with
schedules.tools) at their fire times, each fire journaled before its run
starts; schedules.disabled turns that off. No other command fires them.

With --token (or AGCORE_TOKEN) every request except the health probes must
carry "Authorization: Bearer <token>". On SIGINT or SIGTERM the server stops
accepting requests, lets running turns finish for up to --shutdown-timeout,
cancels the rest, and flushes the journal.

HTTP security. The server listens on a loopback address unless told
otherwise; an address other hosts can reach (0.0.0.0, a LAN address, a
name) needs --token, or --insecure-no-auth to serve without one anyway.
Whatever the address, no web page open in a browser can drive the API:
  - the Host header must name the server (the address connected to, or
    localhost and loopback addresses for a loopback listener), or one of
    the --allowed-host names; any other Host gets 421, which defeats DNS
    rebinding;
  - a request from a page of another origin (Origin, or Sec-Fetch-Site
    cross-site) gets 403, for every method, event streams included, unless
    --cors-origin allows that origin: it is then granted CORS access (its
    own origin, never a wildcard, never cookies), preflights included;
  - a request with a body must send Content-Type: application/json (415
    otherwise), which a page cannot send to another origin without a
    preflight.
Requests without Origin (curl, programs) are not affected. A body must
arrive within --body-timeout (408), headers within --read-header-timeout;
an idle connection is closed after --idle-timeout, and at most
--max-connections connections (event streams included) are open at once.
The serve section of the configuration file sets the same (see
docs/agcore.example.yaml); flags override it.

Cluster. With --cluster NATS-URLS the server is a member of a cluster of
agcore processes (docs/cluster.md): its sessions are journaled in NATS
JetStream instead of the data directory, and it takes the flags of agcore
cluster member (--member-addr, --health-port, --seed for every member,
--node, --streams). Any member's API and console reach every session: a
request naming a session (/v1/sessions/{id}/..., and POST /v1/sessions) is
forwarded, once, to the member that owns the session, after this member's
host, origin and token checks; event streams are forwarded as they are
written. While the cluster has not noticed that an owner died, or when the
owner changed in between, the answer is 503 with Retry-After: send the
request again (turns with the same turn_id). Other requests (listing
sessions, tools, usage, metrics, the console's pages) are served by the
member that receives them. Every member needs the same --token; members
forward it to each other in plain HTTP, so keep them on a private network.
A member fires no schedules and refuses the knowledge base.

Every route, its parameters, bodies, errors and stream events are described
by the OpenAPI 3.1 document the server serves at GET /v1/openapi.json (with
the token, when one is set); docs/http-api.md is the guide, with examples.`,
		Example: `  agcore serve
  agcore --config ./agcore.yaml serve --addr 127.0.0.1:9000
  agcore serve --addr 127.0.0.1:9000 --token "$(openssl rand -hex 16)" --data-dir ./data
  AGCORE_TOKEN="$(openssl rand -hex 16)" agcore serve --addr 0.0.0.0:8080 \
      --allowed-host agents.internal --cors-origin https://console.example.com
  curl -s -X POST localhost:8080/v1/sessions -H 'Content-Type: application/json' -d '{"id":"s1"}'
  curl -N localhost:8080/v1/sessions/s1/turns -H 'Accept: text/event-stream' -H 'Content-Type: application/json' -d '{"input":"Summarise the project"}'
  curl -s localhost:8080/v1/sessions/s1/approvals
  curl -s -X POST localhost:8080/v1/sessions/s1/approvals/CALL_ID -H 'Content-Type: application/json' -d '{"allow":true}'
  AGCORE_TOKEN="$(cat token)" agcore --config agcore.yaml serve --addr 10.0.0.1:8080 \
      --cluster nats://n1:4222,nats://n2:4222,nats://n3:4222 --member-addr 10.0.0.1:7001 --health-port 7101 \
      --node m1 --seed 10.0.0.1:7101 --seed 10.0.0.2:7101 --seed 10.0.0.3:7101`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.token = cmp.Or(o.token, a.getenv("AGCORE_TOKEN"))
			if err := checkListenAddr("--addr", o.addr); err != nil {
				return err
			}
			warning, err := checkExposure(o.addr, o.token, o.insecureNoAuth)
			if err != nil {
				return err
			}
			if warning != "" {
				log := component(a.log, "serve")
				log.Warn().Str("addr", o.addr).Msg(warning)
			}
			if o.maxBody < 0 {
				return &usageError{fmt.Errorf("--max-body must not be negative, got %d", o.maxBody)}
			}
			if err := o.cluster.check(cmd); err != nil {
				return err
			}
			return runServe(cmd, a, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", defaultServeAddr, "address to listen on (port 0 picks a free port)")
	f.StringVar(&o.token, "token", "", "bearer token required of every request but the health probes (env AGCORE_TOKEN, preferred)")
	f.StringVar(&o.dataDir, "data-dir", "", "directory of the session journal (env AGCORE_DATA_DIR; default: the configuration's data_dir, else $XDG_DATA_HOME/agcore)")
	f.StringVar(&o.baseURL, "base-url", "", "API root of the openai provider; without a configuration file, the endpoint to talk to instead of the mock LLM (env OPENAI_BASE_URL)")
	f.StringVar(&o.apiKey, "api-key", "", "API key of the openai provider (env OPENAI_API_KEY, preferred: a flag shows in the process list)")
	f.StringVar(&o.model, "model", "", `model to use, "provider/model" or a model of the openai provider (env OPENAI_MODEL; default: the configuration's, or the mock's model)`)
	f.StringVar(&o.workspace, "workspace", "", "directory the file tools work in, created when missing (default: the configuration's; without a configuration file, a temporary one seeded with a sample project)")
	f.StringVar(&o.permissions, "permission-mode", "", "tool permission mode: ask, accept-edits, read-only or bypass (default: the configuration's permissions.mode, else ask)")
	addPermissionFlags(cmd, &o.perms, false)
	f.Int64Var(&o.maxBody, "max-body", httpapi.DefaultMaxBodyBytes, "largest request body, in bytes")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", defaultShutdownAfter, "how long running turns may finish at shutdown before they are cancelled")
	f.BoolVar(&o.insecureNoAuth, "insecure-no-auth", false, "serve an address other hosts can reach without --token (anyone who can connect can run tools)")
	f.StringArrayVar(&o.corsOrigins, "cors-origin", nil, "web origin whose pages may call the API, such as https://console.example.com (repeatable; config serve.cors_origins)")
	f.StringArrayVar(&o.allowedHosts, "allowed-host", nil, "name the server is reached by, accepted in the Host header: name or name:port (repeatable; config serve.allowed_hosts)")
	f.DurationVar(&o.readHeaderTimeout, "read-header-timeout", httpapi.DefaultReadHeaderTimeout, "time to read a request's headers (config serve.read_header_timeout)")
	f.DurationVar(&o.bodyTimeout, "body-timeout", httpapi.DefaultBodyTimeout, "time to read a request's body; a slower one gets 408 (config serve.body_timeout)")
	f.DurationVar(&o.idleTimeout, "idle-timeout", httpapi.DefaultIdleTimeout, "time a keep-alive connection may wait for its next request (config serve.idle_timeout)")
	f.IntVar(&o.maxConnections, "max-connections", httpapi.DefaultMaxConnections, "connections open at once, event streams included (config serve.max_connections)")
	addServeClusterFlags(cmd, &o.cluster)
	return cmd
}

// resolveHTTP fills in the HTTP settings: the serve section of the
// configuration file, replaced by each flag given, then checks them.
func (o *serveOptions) resolveHTTP(cmd *cobra.Command, file config.Serve) error {
	f := cmd.Flags()
	if !f.Changed("cors-origin") {
		o.corsOrigins = file.CORSOrigins
	}
	if !f.Changed("allowed-host") {
		o.allowedHosts = file.AllowedHosts
	}
	for flag, v := range map[string]*time.Duration{"read-header-timeout": &o.readHeaderTimeout,
		"body-timeout": &o.bodyTimeout, "idle-timeout": &o.idleTimeout} {
		if *v < 0 {
			return &usageError{fmt.Errorf("--%s must not be negative, got %v", flag, *v)}
		}
	}
	if o.maxConnections < 0 {
		return &usageError{fmt.Errorf("--max-connections must not be negative, got %d", o.maxConnections)}
	}
	if !f.Changed("read-header-timeout") {
		o.readHeaderTimeout = file.ReadHeaderTimeout
	}
	if !f.Changed("body-timeout") {
		o.bodyTimeout = file.BodyTimeout
	}
	if !f.Changed("idle-timeout") {
		o.idleTimeout = file.IdleTimeout
	}
	if !f.Changed("max-connections") {
		o.maxConnections = file.MaxConnections
	}
	for _, origin := range o.corsOrigins {
		if _, err := httpapi.ParseOrigin(origin); err != nil {
			return &usageError{fmt.Errorf("--cors-origin: %w", err)}
		}
	}
	for _, host := range o.allowedHosts {
		if _, err := httpapi.ParseAllowedHost(host); err != nil {
			return &usageError{fmt.Errorf("--allowed-host: %w", err)}
		}
	}
	if o.insecureNoAuth && o.token != "" {
		return &usageError{errors.New("--insecure-no-auth and --token (or AGCORE_TOKEN) contradict each other; keep one")}
	}
	return nil
}

// checkExposure refuses to serve without a token an address that other
// hosts can reach: anything but a loopback address or "localhost" (a name
// may resolve to anything). With insecure (--insecure-no-auth) it serves
// anyway and returns the warning to log.
func checkExposure(addr, token string, insecure bool) (warning string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", &usageError{fmt.Errorf("--addr %q: %w", addr, err)}
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() || token != "" {
		return "", nil
	}
	if !insecure {
		return "", &usageError{fmt.Errorf("--addr %s can be reached from other hosts, and no token is set: anyone who "+
			"connects could run tools in the workspace; set --token (or AGCORE_TOKEN), listen on 127.0.0.1, "+
			"or pass --insecure-no-auth to serve without authentication anyway", addr)}
	}
	return "serving without authentication on an address other hosts can reach (--insecure-no-auth): " +
		"anyone who connects can run tools; set --token to require one", nil
}

// serveRuntime is the configuration serve runs: the configuration file,
// the environment and the flags, as for agcore run, and without a file
// today's defaults: the embedded mock LLM when no endpoint is named, and
// a temporary workspace seeded with a sample project.
type serveRuntime struct {
	cfg *config.Config
	// fromFile is true when a configuration file was read.
	fromFile bool
	// mock is true when the openai provider is the embedded mock LLM.
	mock bool
}

// serveConfig resolves the configuration of serve, checking everything
// before anything is created.
func (a *app) serveConfig(cmd *cobra.Command, o serveOptions) (serveRuntime, error) {
	over := config.Overrides{DataDir: o.dataDir, Workspace: o.workspace, Model: o.model, BaseURL: o.baseURL, APIKey: o.apiKey,
		Allow: o.perms.allow, Deny: o.perms.deny}
	if cmd.Flags().Changed("permission-mode") {
		over.PermissionMode = o.permissions
	}
	sr := serveRuntime{fromFile: config.Path(a.configPath, a.getenv) != ""}
	sr.mock = !sr.fromFile && cmp.Or(o.baseURL, a.getenv(config.EnvOpenAIBaseURL)) == ""
	if sr.mock {
		over.APIKey = "" // never sent to the mock
		if cmp.Or(o.model, a.getenv(config.EnvOpenAIModel)) == "" {
			over.Model = config.OpenAIProvider + "/" + mockllm.DefaultModel
		}
	}
	cfg, err := a.loadConfig(over)
	if err != nil {
		return sr, err
	}
	if cfg.Permissions.Mode == "" {
		cfg.Permissions.Mode = toolsys.ModeAsk.String() // approvals are answered through the API
	}
	if !sr.fromFile && cfg.BasePrompt == "" {
		cfg.BasePrompt = demoSystemPrompt
	}
	sr.cfg = cfg
	return sr, nil
}

// useMock points the openai provider of cfg at the embedded mock LLM at
// url, without an API key.
func useMock(cfg *config.Config, url string) {
	for i := range cfg.Providers {
		if p := &cfg.Providers[i]; p.Name == config.OpenAIProvider {
			p.BaseURL, p.APIKey, p.APIKeyEnv = url, "", ""
		}
	}
}

// endpointOf says where the default model of cfg is served (" at URL"),
// or that it runs in process; mockURL is the embedded mock LLM's, if it
// runs.
func endpointOf(cfg *config.Config, mockURL string, r *redact.Redactor) string {
	name, _, _ := strings.Cut(cfg.DefaultModel, "/")
	for _, p := range cfg.Providers {
		switch {
		case p.Name != name:
		case p.Type == config.TypeScripted:
			return " (scripted, in process)"
		case p.BaseURL == "":
			return " at https://api.openai.com/v1"
		case mockURL != "" && p.BaseURL == mockURL:
			return " at " + mockURL + " (embedded mock LLM)"
		default:
			return " at " + r.String(p.BaseURL)
		}
	}
	return ""
}

// serveWorkspace prepares the workspace of serve without a configuration
// file, as it always did: dir, or a new temporary directory under tmp,
// seeded with the sample project when empty. remove deletes a temporary
// one.
func serveWorkspace(dir, tmp string) (root string, remove func(), err error) {
	ws, _, closeWS, err := openWorkspace(dir, tmp)
	if err != nil {
		return "", nil, err
	}
	root = ws.Root()
	closeWS(true) // config.Build opens it again
	remove = func() {}
	if dir == "" {
		remove = func() { _ = os.RemoveAll(root) }
	}
	return root, remove, nil
}

// runServe serves the API until cmd's context ends, then shuts down
// gracefully.
func runServe(cmd *cobra.Command, a *app, o serveOptions) (err error) {
	ctx, out, base := cmd.Context(), cmd.OutOrStdout(), a.log
	log := component(base, "serve")
	sr, err := a.serveConfig(cmd, o)
	if err != nil {
		return err
	}
	cfg := sr.cfg
	if err := o.resolveHTTP(cmd, cfg.Serve); err != nil {
		return err
	}
	a.redactor.Add(o.token, "")

	mockURL := ""
	if sr.mock {
		// The keys are not sent to the mock, but they stay masked.
		a.redactor.Add(o.apiKey, "")
		a.redactor.Add(a.getenv(config.EnvOpenAIAPIKey), "")
		model, err := scripted.New(scripted.Demo(), scripted.Options{Logger: component(base, "scripted")})
		if err != nil {
			return err
		}
		mock, err := mockllm.Start(ctx, "127.0.0.1:0", mockllm.Config{Provider: model, Logger: component(base, "mock-llm")})
		if err != nil {
			return err
		}
		defer mock.Close()
		mockURL = mock.URL()
		useMock(cfg, mockURL)
	}
	wsNote := ""
	if sr.fromFile && cfg.Workspace != "" {
		if err := os.MkdirAll(cfg.Workspace, 0o755); err != nil {
			return fmt.Errorf("workspace: %w", err)
		}
	}
	if !sr.fromFile {
		root, remove, err := serveWorkspace(cfg.Workspace, a.getenv("TMPDIR"))
		if err != nil {
			return err
		}
		defer remove()
		if cfg.Workspace == "" {
			wsNote = " (temporary, removed at exit)"
		}
		cfg.Workspace = root
	}

	// An MCP server behind OAuth with no stored token waits for a user:
	// GET /v1/mcp/authorizations and the console list its URL.
	authz := &mcp.PendingAuthorizer{Logger: component(base, "mcp-oauth")}
	built, err := config.Build(ctx, cfg, config.BuildOptions{Getenv: a.getenv, Logger: component(base, "runtime"), Redactor: a.redactor,
		Scheduler:     !o.cluster.enabled(), // every member would fire each schedule
		MCPAuthorizer: authz})

	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, built.Close()) }()
	rc := built.Runtime
	rc.Approver = actors.ManualApprover()
	allowAuthorizationTime(rc.MCPServers, authz)
	tel, err := a.setupOTel(ctx, true)
	if err != nil {
		return err
	}
	defer tel.close(ctx, log)
	tel.apply(&rc)
	if o.cluster.enabled() {
		closeJournal, err := o.cluster.useJournal(ctx, a, &rc)
		if err != nil {
			return err
		}
		defer closeJournal()
	} else if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory %s: %w", cfg.DataDir, err)
	}
	rt, err := actors.New(rc)
	if err != nil {
		return err
	}
	if err := waitServeMCP(ctx, rt, cfg, authz, cmd.ErrOrStderr()); err != nil {
		return errors.Join(err, rt.Shutdown(context.WithoutCancel(ctx)))
	}
	if !o.cluster.enabled() { // a member's journal is on NATS: nothing to back up here
		stopControl, err := serveControl(cfg.DataDir, rt, component(base, "control"))
		if err != nil {
			log.Warn().Err(err).Msg("no control socket: agcore backup cannot reach this server's store")
		}
		defer stopControl()
	}
	srv, err := httpapi.New(httpapi.Config{
		Runtime: rt, Tools: built.Tools, MetricsReader: tel.reader, Console: true, Schedules: built.Schedules,
		Token: o.token, MaxBodyBytes: o.maxBody, Logger: base,
		CORSOrigins: o.corsOrigins, AllowedHosts: o.allowedHosts,
		ReadHeaderTimeout: o.readHeaderTimeout, BodyTimeout: o.bodyTimeout, IdleTimeout: o.idleTimeout,
		MaxConnections: o.maxConnections, MCPAuthorizations: authz,
	})
	if err != nil {
		_ = rt.Shutdown(context.WithoutCancel(ctx))
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		_ = srv.Shutdown(context.WithoutCancel(ctx))
		return listenError("--addr", o.addr, err)
	}
	serveLn, leave := srv.Serve, func(context.Context) error { return nil }
	if o.cluster.enabled() {
		cs, err := o.cluster.joinCluster(ctx, a, rt, srv, ln, o)
		if err != nil {
			_ = ln.Close()
			return errors.Join(err, srv.Shutdown(context.WithoutCancel(ctx)))
		}
		serveLn, leave = cs.serve, cs.leave
		fmt.Fprintln(out, cs.joined)
	}
	served := make(chan error, 1)
	go func() { served <- serveLn(ln) }()

	fmt.Fprintf(out, "agcore API listening on http://%s\n", ln.Addr())
	fmt.Fprintf(out, "model %s%s · data %s · workspace %s%s · permissions %s\n",
		cfg.DefaultModel, endpointOf(cfg, mockURL, a.redactor), cfg.DataDir, rc.Workspace.Root(), wsNote, cfg.Permissions.Mode)
	if o.token != "" {
		fmt.Fprintln(out, "bearer token required")
	}
	if len(o.corsOrigins) > 0 {
		fmt.Fprintf(out, "pages of %s may call the API\n", strings.Join(o.corsOrigins, ", "))
	}
	log.Info().Str("addr", ln.Addr().String()).Msg("serving; interrupt to stop")

	select {
	case <-ctx.Done():
	case err := <-served:
		_ = srv.Shutdown(context.WithoutCancel(ctx))
		_ = leave(context.WithoutCancel(ctx))
		return fmt.Errorf("serve: %w", err)
	}
	log.Info().Dur("timeout", o.shutdownTimeout).Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if err := leave(sctx); err != nil {
		log.Warn().Err(err).Msg("leaving the cluster")
	}
	if err := <-served; !errors.Is(err, httpapi.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(out, "agcore API stopped")
	return nil
}
