package config

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/knowledge"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/openai"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/schedule"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/builtin"
	"github.com/agcore/agcore/toolsys/mcp"
	"github.com/agcore/agcore/toolsys/sandbox"
	"github.com/agcore/agcore/toolsys/skills"
	"github.com/agcore/agcore/toolsys/wasm"
)

// BuildOptions are what Build needs besides the Config.
type BuildOptions struct {
	// Getenv reads the variables named by api_key_env and
	// bearer_token_env. Nil means os.Getenv.
	Getenv func(string) string
	// Logger is the runtime's logger. The zero Logger discards.
	Logger zerolog.Logger
	// SkipMCP leaves the MCP servers out of the runtime configuration (for
	// commands that only list the built-in tools).
	SkipMCP bool
	// ToolsOnly builds what lists the tools and leaves out what needs the
	// data directory (the knowledge base, which opens its store): for a
	// command that starts no runtime.
	ToolsOnly bool
	// Scheduler opens the schedules of the data directory (Built.Schedules)
	// and, unless schedules.disabled, gives them to the runtime to fire
	// (Runtime.Schedules). Only `agcore serve` sets it.
	Scheduler bool
	// Redactor is the process's redactor: Build adds every API key, MCP
	// bearer token and value of an MCP header named like a credential
	// (Authorization, X-Api-Key, ...) it reads to it, and gives it to
	// the tool registry and the runtime. Nil means a new one (Built.Redactor).
	Redactor *redact.Redactor
	// MCPAuthorizer carries out the interactive step of the MCP servers'
	// authorization flow (see mcp.LoopbackAuthorizer). Nil means no one
	// can authorize: stored tokens are used and refreshed, and a server
	// that needs a new authorization fails with a message naming
	// `agcore mcp test`.
	MCPAuthorizer mcp.Authorizer
	// MCPElicit answers the MCP servers' questions (elicitation/create).
	// Nil means the servers may not ask.
	MCPElicit mcp.ElicitFunc
}

// Built is a runtime configuration made from a Config, with the resources
// it holds (the background processes of bash).
type Built struct {
	// Runtime is the configuration to pass to actors.New. Its DataDir is
	// the Config's; clear it to run in memory. With knowledge enabled it
	// holds the opened Store of that directory instead.
	Runtime actors.Config
	// Tools is the tool registry of Runtime.
	Tools *toolsys.Registry
	// Redactor masks every credential the configuration holds; it is the
	// one of BuildOptions, or a new one.
	Redactor *redact.Redactor
	// Sandbox confines the commands of the bash tool in Tools.
	Sandbox *sandbox.Sandbox
	// Schedules are the schedules of the data directory, nil unless
	// BuildOptions.Scheduler or schedules.tools asks for them.
	Schedules *schedule.Store
	// WASM is the folder of WebAssembly tools registered in Tools, nil
	// when there is none (no wasm.dir and no data directory). Its
	// Refused lists the files that did not load.
	WASM *wasm.Folder
	// Skills is the catalog of the skills folder, nil without skills.dir.
	// Its Refused lists the SKILL.md files that did not load.
	Skills *skills.Catalog

	knowledge *knowledge.Base // the knowledge base, when opened

	closers []func() error
}

// Close releases what Build opened. Call it after the runtime has shut
// down.
func (b *Built) Close() error {
	var errs []error
	for i := len(b.closers) - 1; i >= 0; i-- {
		errs = append(errs, b.closers[i]())
	}
	b.closers = nil
	return errors.Join(errs...)
}

// Build makes the runtime configuration of c: a provider registry with
// every provider (the default one being that of default_model), the price
// table, the agent profiles, the limits, the retry policy of model calls
// (the runtime's, the only layer that retries them), and a tool registry holding the
// built-in tools confined to the workspace behind the permission
// pipeline and the WebAssembly tools of the wasm folder (see WASM), and
// the MCP servers. The runtime connects to the MCP servers
// itself, one supervised connection actor per server that reconnects with
// backoff, and registers their tools in the same registry, so they pass the
// same permission pipeline. ctx bounds the loading of the WebAssembly
// tools; the folder is then followed until Close. The memory tools
// (memory_tools), web_search (web_search, only with a backend) and the
// skills of skills.dir (load_skill, their files through read_file, and the
// skills layer of the prompt) are added when configured.
func Build(ctx context.Context, c *Config, opts BuildOptions) (*Built, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Redactor == nil {
		opts.Redactor = redact.New()
	}
	b := &Built{Redactor: opts.Redactor}
	ok := false
	defer func() {
		if !ok {
			_ = b.Close()
		}
	}()
	provs, err := c.providers(opts)
	if err != nil {
		return nil, err
	}
	if b.Tools, err = b.tools(c, opts); err != nil {
		return nil, err
	}
	if err := b.wasmTools(ctx, c, opts); err != nil {
		return nil, err
	}
	var servers []mcp.ServerConfig
	if !opts.SkipMCP {
		for _, s := range c.MCPServers {
			sc, err := s.ServerConfig(opts.Getenv)
			if err != nil {
				return nil, err
			}
			c.mcpClient(s, &sc, opts)
			opts.Redactor.Add(sc.BearerToken, "")
			for _, v := range s.secretValues(opts.Getenv) {
				opts.Redactor.Add(v, "")
			}
			for name, v := range sc.Headers {
				if redact.SecretKey(name) {
					opts.Redactor.Add(v, "")
				}
			}
			servers = append(servers, sc)
		}
	}
	dir := c.Workspace
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("config: workspace: %w", err)
		}
	}
	ws, err := toolsys.NewWorkspace(dir)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err) // NewWorkspace names the workspace
	}
	b.closers = append(b.closers, ws.Close)
	for i := range servers {
		servers[i].Roots = []string{ws.Root()} // roots/list answers with the workspace
	}
	durability, err := parseDurability(c.Durability)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	midTurn, err := parseMidTurn(c.Limits.MidTurn)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	limits := c.Limits.actors()
	limits.MidTurn = midTurn
	prices := providers.PriceTable{}
	for _, m := range c.Models {
		prices[m.Name] = providers.Price{InputPerMillion: m.InputPerMillion,
			CachedInputPerMillion: m.CachedInputPerMillion, OutputPerMillion: m.OutputPerMillion}
	}
	agents := make([]actors.AgentProfile, len(c.Agents))
	for i, a := range c.Agents {
		vars := make(map[string]any, len(a.Vars))
		for k, v := range a.Vars {
			vars[k] = v
		}
		params, err := a.Params.actors()
		if err != nil {
			return nil, fmt.Errorf("config: agents[%d].params.%w", i, err)
		}
		agents[i] = actors.AgentProfile{Name: a.Name, Description: a.Description, Prompt: a.Prompt, Vars: vars,
			Model: a.Model, Tools: a.Tools, Limits: a.Limits.actors(), Retrieve: a.Retrieve, Stream: streamMode(a.Stream),
			Params: params, Output: a.outputMode()}
	}
	prompts, _, err := c.prompts()
	if err != nil {
		return nil, fmt.Errorf("config: prompt_dirs: %w", err)
	}
	b.Runtime = actors.Config{
		DataDir:      c.DataDir,
		Durability:   durability,
		Providers:    provs,
		Model:        c.DefaultModel,
		Prices:       prices,
		Tools:        b.Tools,
		Workspace:    ws,
		Agents:       agents,
		DefaultAgent: c.DefaultAgent,
		BasePrompt:   c.BasePrompt,
		Prompts:      prompts,
		Limits:       limits,
		Retry:        c.Retry.policy(),
		MCPServers:   servers,
		Logger:       opts.Logger,
		Redactor:     opts.Redactor,
		Compaction:   c.Compaction.actors(),
		SubAgents:    c.SubAgents.actors(),

		StructuredOutput: c.structuredOutput(),
	}
	if c.Knowledge.Enabled && !opts.ToolsOnly {
		if err := b.openKnowledge(c, opts); err != nil {
			return nil, err
		}
	}
	if err := b.memoryTools(c, opts); err != nil {
		return nil, err
	}
	if err := b.webSearch(c, opts); err != nil {
		return nil, err
	}
	if err := b.loadSkills(c, opts); err != nil {
		return nil, err
	}
	if err := b.schedules(c, opts); err != nil {
		return nil, err
	}
	ok = true
	return b, nil
}

// openKnowledge opens the store of the data directory and a knowledge base
// over it, and hands both to the runtime: Runtime holds the Store instead
// of the DataDir, and Close closes it after the runtime has shut down.
func (b *Built) openKnowledge(c *Config, opts BuildOptions) error {
	if c.DataDir == "" {
		return errors.New("config: knowledge.enabled needs a data directory (data_dir or --data-dir)")
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("config: data directory: %w", err)
	}
	log := opts.Logger.With().Str("component", "knowledge").Logger()
	store, err := memory.Open(memory.Options{Dir: c.DataDir, Logger: log})
	if err != nil {
		return fmt.Errorf("config: data directory %s: %w", c.DataDir, err)
	}
	b.closers = append(b.closers, store.Close)
	kb, err := knowledge.New(store, knowledge.Options{Logger: log, Eviction: c.Knowledge.Eviction.KnowledgePolicy()})
	if err != nil {
		return fmt.Errorf("config: knowledge: %w", err)
	}
	r, err := knowledge.NewRetriever(kb, knowledge.RetrieverOptions{MaxResults: c.Knowledge.MaxResults})
	if err != nil {
		return fmt.Errorf("config: knowledge: %w", err)
	}
	b.Runtime.DataDir, b.Runtime.Store, b.Runtime.Knowledge = "", store, actors.KnowledgeFrom(r)
	b.knowledge = kb
	return nil
}

// streamMode converts an agent's stream key.
func streamMode(stream *bool) actors.StreamMode {
	switch {
	case stream == nil:
		return actors.StreamDefault
	case *stream:
		return actors.StreamOn
	}
	return actors.StreamOff
}

// actors converts c.
func (c Compaction) actors() actors.Compaction {
	return actors.Compaction{Disabled: c.Disabled, SummaryModel: c.SummaryModel, SummaryPrompt: c.SummaryPrompt,
		Config: memory.CompactionConfig{ContextWindow: c.ContextWindow, ReservedOutput: c.ReservedOutput,
			Buffer: c.Buffer, KeepRecent: c.KeepRecent}}
}

// actors converts s.
func (s SubAgents) actors() actors.SubAgents {
	b := s.Budget
	return actors.SubAgents{Enabled: s.Enabled, Handoff: s.Handoff, MaxDepth: s.MaxDepth, MaxConcurrent: s.MaxConcurrent,
		Budget: actors.Budget{MaxTokens: b.MaxTokens, MaxCost: b.MaxCost, MaxTime: b.MaxTime, MaxRoundTrips: b.MaxRoundTrips}}
}

// actors converts l, leaving MidTurn to the caller.
func (l Limits) actors() actors.Limits {
	return actors.Limits{MaxRoundTrips: l.MaxRoundTrips, MaxTokens: l.MaxTokens, MaxCost: l.MaxCost,
		ToolTimeout: l.ToolTimeout, MaxParallelTools: l.MaxParallelTools}
}

// providers builds the provider registry.
func (c *Config) providers(opts BuildOptions) (*providers.Registry, error) {
	reg := &providers.Registry{}
	for _, p := range c.Providers {
		log := opts.Logger.With().Str("component", "provider").Str("provider", p.Name).Logger()
		var (
			prov providers.Provider
			err  error
		)
		switch p.Type {
		case TypeOpenAI:
			key := p.APIKey
			if key == "" && p.APIKeyEnv != "" {
				key = opts.Getenv(p.APIKeyEnv)
			}
			// The runtime takes this retry layer off for model calls and
			// retries them itself with the same policy (Runtime.Retry);
			// it applies to the provider's other callers (summaries).
			retry := c.Retry.policy()
			prov, err = openai.New(openai.Options{BaseURL: p.BaseURL, APIKey: key, Model: p.DefaultModel,
				Timeout: p.Timeout, Retry: &retry, Logger: log, Name: p.Name, Redactor: opts.Redactor})
		case TypeScripted:
			script := scripted.Demo()
			if p.Script != "" {
				if script, err = scripted.LoadFile(p.Script); err != nil {
					break
				}
			}
			prov, err = scripted.New(script, scripted.Options{Model: p.DefaultModel, Logger: log})
		default:
			err = fmt.Errorf("unknown type %q", p.Type)
		}
		if err == nil && p.Stream != nil && !*p.Stream {
			prov = providers.ChatOnly(prov)
		}
		if err == nil {
			err = reg.Register(p.Name, prov)
		}
		if err != nil {
			return nil, fmt.Errorf("config: provider %s: %w", p.Name, err)
		}
	}
	if err := reg.SetDefault(providerOf(c.DefaultModel)); err != nil {
		return nil, fmt.Errorf("config: default_model: %w", err)
	}
	return reg, nil
}

// providerOf returns the provider part of a "provider/model" reference.
func providerOf(ref string) string {
	for i := range len(ref) {
		if ref[i] == '/' {
			return ref[:i]
		}
	}
	return ref
}

// Tool categories of the built-in tools.
var builtinCategory = map[string]string{
	"read_file": "files", "write_file": "files", "edit_file": "files", "list_dir": "files", "glob": "files",
	"grep": "files", "bash": "shell", "bash_process": "shell", "web_fetch": "web",
}

// tools builds the tool registry with the built-in tools.
func (b *Built) tools(c *Config, opts BuildOptions) (*toolsys.Registry, error) {
	perms, err := toolsys.NewPermissions(c.permissionConfig())
	if err != nil {
		return nil, fmt.Errorf("config: permissions: %w", err)
	}
	log := opts.Logger.With().Str("component", "tools").Logger()
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms, Logger: log, Redactor: opts.Redactor})
	procs := builtin.NewProcessManager(builtin.ProcessOptions{Logger: log})
	b.closers = append(b.closers, procs.Close)
	b.Sandbox = sandbox.New(c.Sandbox.sandboxConfig(log))
	for _, t := range builtin.All(builtin.Options{Processes: procs, Sandbox: b.Sandbox, AllowHardlinks: c.Files.AllowHardlinks,
		FetchAllowedHosts: c.WebFetch.AllowedHosts, Logger: log}) {
		cat := builtinCategory[t.Name()]
		if err := reg.Register(t, toolsys.WithSource(toolsys.SourceBuiltin), toolsys.WithCategory(cat), toolsys.WithTags("builtin", cat)); err != nil {
			return nil, fmt.Errorf("config: tool %s: %w", t.Name(), err)
		}
	}
	return reg, nil
}

// permissionConfig returns the permission pipeline's configuration.
func (c *Config) permissionConfig() toolsys.PermissionConfig {
	mode, _ := toolsys.ParseMode(cmp.Or(c.Permissions.Mode, DefaultPermissionMode)) // validated
	return toolsys.PermissionConfig{Mode: mode, Allow: c.Permissions.Allow, Deny: c.Permissions.Deny, ApprovalTimeout: c.Permissions.ApprovalTimeout,
		Remedy: "to run such calls, set permissions.mode (accept-edits runs file edits, bypass runs every tool) " +
			"or add a permissions.allow rule that matches the call, in the configuration file"}
}

// ServerConfig maps s onto the MCP client's configuration, reading the
// bearer token from the variable bearer_token_env names.
func (s MCPServer) ServerConfig(getenv func(string) string) (mcp.ServerConfig, error) {
	perm, err := toolsys.ParsePermission(s.Permission)
	if err != nil {
		return mcp.ServerConfig{}, fmt.Errorf("config: mcp server %s: %w", s.Name, err)
	}
	sc := mcp.ServerConfig{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Dir,
		URL: s.URL, Headers: s.Headers, Permission: &perm, CallTimeout: s.CallTimeout,
		ResourceTools: s.ResourceTools, PromptTools: s.PromptTools}
	if s.BearerTokenEnv != "" {
		if sc.BearerToken = getenv(s.BearerTokenEnv); sc.BearerToken == "" {
			return mcp.ServerConfig{}, fmt.Errorf("config: mcp server %s: environment variable %s is empty", s.Name, s.BearerTokenEnv)
		}
	}
	if err := s.resolveSecretRefs(&sc, getenv); err != nil {
		return mcp.ServerConfig{}, err
	}
	if err := sc.Validate(); err != nil {
		return mcp.ServerConfig{}, fmt.Errorf("config: %w", err)
	}
	return sc, nil
}
