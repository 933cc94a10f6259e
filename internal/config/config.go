package config

import (
	"time"

	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/toolsys"
)

// Defaults of the configuration, as Default returns them.
const (
	// DefaultModel is the model of agents that name none.
	DefaultModel = "openai/gpt-4o-mini"
	// DefaultMockModel is the model the built-in mock provider answers as.
	DefaultMockModel = "mock/scripted"
	// DefaultProviderTimeout bounds one model call attempt of an
	// openai-type provider (see Provider.Timeout).
	DefaultProviderTimeout = 120 * time.Second
	// DefaultMaxRoundTrips is Limits.MaxRoundTrips when the file sets none.
	DefaultMaxRoundTrips = 10
	// DefaultToolTimeout is Limits.ToolTimeout when the file sets none.
	DefaultToolTimeout = 60 * time.Second
	// DefaultMaxParallelTools is Limits.MaxParallelTools when the file sets
	// none.
	DefaultMaxParallelTools = 8
	// DefaultMCPCallTimeout bounds one MCP tool call when a server sets no
	// call_timeout.
	DefaultMCPCallTimeout = 60 * time.Second
	// DefaultMCPStartupTimeout is how long run, chat, serve and tools wait
	// for an MCP server to connect when it sets no startup_timeout.
	DefaultMCPStartupTimeout = 30 * time.Second
	// DefaultPermissionMode is the permission mode Build uses when
	// permissions.mode is empty.
	DefaultPermissionMode = "accept-edits"
	// DefaultApprovalTimeout is permissions.approval_timeout when the
	// file sets none.
	DefaultApprovalTimeout = toolsys.DefaultApprovalTimeout
)

// The provider types.
const (
	// TypeOpenAI is any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM,
	// llama.cpp, ...).
	TypeOpenAI = "openai"
	// TypeScripted is the deterministic, offline scripted model: the demo
	// script, or the rules of Provider.Script.
	TypeScripted = "scripted"
)

// Config is the agcore configuration file. Every field has a documented
// default (see Default); Load fills in what a file leaves out and validates
// every field.
type Config struct {
	// DataDir is where sessions are journaled. Empty means
	// $XDG_DATA_HOME/agcore (or ~/.local/share/agcore); see DataDirFor.
	DataDir string `yaml:"data_dir"`
	// Workspace is the directory the file tools are confined to. Empty
	// means the current directory.
	Workspace string `yaml:"workspace"`
	// Durability says when a journal append reaches disk: "sync" (fsync
	// each append, the default), "batch" (group commit) or "none".
	Durability string `yaml:"durability"`
	// DefaultModel is the "provider/model" of agents that name no model.
	// Default DefaultModel.
	DefaultModel string `yaml:"default_model"`
	// DefaultAgent is the agent of a new session. Empty means the first of
	// Agents.
	DefaultAgent string `yaml:"default_agent"`
	// BasePrompt is the first layer of every system prompt, a
	// text/template. Empty means none.
	BasePrompt string `yaml:"base_prompt"`
	// PromptDirs are folders of prompt templates (.tmpl, .tpl, .txt, .md
	// files, each a template named by its file name without the
	// extension, with the {{define}} blocks it holds), relative to the
	// file. base_prompt and agent prompts may use them with {{template
	// "name" .}}, and they may use each other (shared partials). A
	// template or variable that is missing is an error naming it. Empty
	// means none.
	PromptDirs []string `yaml:"prompt_dirs"`

	// Providers are the model endpoints, by name. A file that lists
	// providers replaces the default list ("openai" and "mock").
	Providers []Provider `yaml:"providers"`
	// Models price the models, by model name or name prefix. Empty means
	// every call is free.
	Models []Model `yaml:"models"`
	// Agents are the agent profiles. Empty means one agent, "default",
	// with no prompt of its own and every tool.
	Agents []Agent `yaml:"agents"`
	// MCPServers are the MCP servers whose tools agents may call.
	MCPServers []MCPServer `yaml:"mcp_servers"`
	// Permissions decide which tool calls run without asking.
	Permissions Permissions `yaml:"permissions"`
	// Limits bound turns and sessions.
	Limits Limits `yaml:"limits"`
	// Retry says how failed model calls are repeated.
	Retry Retry `yaml:"retry"`
	// Sandbox confines bash's commands. Its mode defaults to "refuse".
	Sandbox Sandbox `yaml:"sandbox"`
	// Files configures the file tools (read_file, write_file, edit_file,
	// list_dir, glob, grep).
	Files Files `yaml:"files"`
	// WebFetch configures the web_fetch tool.
	WebFetch WebFetch `yaml:"web_fetch"`
	// Compaction says when and how a long history is shortened.
	Compaction Compaction `yaml:"compaction"`
	// SubAgents gives agents the spawn_agent and transfer_to_agent tools.
	SubAgents SubAgents `yaml:"sub_agents"`
	// Knowledge gives the runtime a knowledge base in its data directory.
	Knowledge Knowledge `yaml:"knowledge"`
	// WASM configures the WebAssembly tools of a folder.
	WASM WASM `yaml:"wasm"`
	// MemoryTools gives agents the memory tools.
	MemoryTools MemoryTools `yaml:"memory_tools"`
	// WebSearch configures the web_search tool, registered only with a
	// backend.
	WebSearch WebSearch `yaml:"web_search"`
	// Skills configures the agent skills of a folder.
	Skills Skills `yaml:"skills"`
	// Serve configures the HTTP API of `agcore serve`.
	Serve Serve `yaml:"serve"`
	// Schedules configures scheduled agent runs.
	Schedules Schedules `yaml:"schedules"`
}

// Files configures the file tools, which reach files only through a root
// opened on the workspace and read and write regular files only.
type Files struct {
	// AllowHardlinks lets the file tools read and write a regular file
	// with more than one hard link. False (the default) refuses it, since
	// another name of the same file may lie outside the workspace.
	AllowHardlinks bool `yaml:"allow_hardlinks"`
}

// Compaction says when and how a long history is shortened: once the
// estimated tokens of a history pass context_window - reserved_output -
// buffer (checked when a turn ends and after each tool round), old tool
// results are pruned, and with a summary_model the older part is
// summarised. A model that refuses a request as too long makes the
// session compact at once and retry, once per turn.
type Compaction struct {
	// Disabled turns automatic compaction off.
	Disabled bool `yaml:"disabled"`
	// ContextWindow is the model's context size in tokens. Zero means
	// 128,000.
	ContextWindow int `yaml:"context_window"`
	// ReservedOutput is kept free for the reply. Zero means 20,000;
	// negative means none.
	ReservedOutput int `yaml:"reserved_output"`
	// Buffer is kept free on top of reserved_output. Zero means 13,000;
	// negative means none.
	Buffer int `yaml:"buffer"`
	// KeepRecent is the number of trailing messages never compacted. Zero
	// means 6.
	KeepRecent int `yaml:"keep_recent"`
	// SummaryModel is the "provider/model" that writes summaries (possibly
	// a cheaper one). Empty means pruning only.
	SummaryModel string `yaml:"summary_model"`
	// SummaryPrompt is the summariser's instruction. Empty means a
	// built-in one.
	SummaryPrompt string `yaml:"summary_prompt"`
}

// SubAgents gives agents tools to delegate: spawn_agent runs a task in a
// child session with a fresh context and returns its answer; handoff's
// transfer_to_agent switches the session's agent profile mid-turn.
type SubAgents struct {
	// Enabled gives agents whose tool list admits it the spawn_agent tool.
	Enabled bool `yaml:"enabled"`
	// Handoff gives them the transfer_to_agent tool.
	Handoff bool `yaml:"handoff"`
	// MaxDepth is how deep sub-agents may nest. Zero means 3.
	MaxDepth int `yaml:"max_depth"`
	// MaxConcurrent is how many sub-agents one session runs at once. Zero
	// means 8.
	MaxConcurrent int `yaml:"max_concurrent"`
	// Budget bounds every sub-agent subtree; a spawn may ask for less,
	// never more. Zero fields bound nothing.
	Budget SubAgentBudget `yaml:"budget"`
}

// SubAgentBudget bounds a sub-agent subtree.
type SubAgentBudget struct {
	// MaxTokens is the subtree's total token budget.
	MaxTokens int64 `yaml:"max_tokens"`
	// MaxCost is its cost budget, in the price table's currency.
	MaxCost float64 `yaml:"max_cost"`
	// MaxTime is its wall-clock time from the first spawn.
	MaxTime time.Duration `yaml:"max_time"`
	// MaxRoundTrips is the number of model calls it may make.
	MaxRoundTrips int `yaml:"max_round_trips"`
}

// Knowledge configures the knowledge base: pages kept in the data
// directory's store (`agcore knowledge add` writes them) and retrieved by
// keyword for the agents that set retrieve: true.
type Knowledge struct {
	// Enabled opens the knowledge base; without it, no agent may set
	// retrieve: true.
	Enabled bool `yaml:"enabled"`
	// MaxResults is the most pages one retrieval returns. Zero means 20.
	MaxResults int `yaml:"max_results"`
	// Eviction bounds the pages kept. The zero value keeps every page.
	Eviction KnowledgeEviction `yaml:"eviction"`
}

// WASM configures the WebAssembly tools: every .wasm file of the folder
// that follows the convention of docs/wasm-tools.md is a tool (source
// wasm), loaded at start and followed while agcore runs: a file dropped
// in is registered, a changed one recompiled, a removed one unregistered.
// Compiled code is cached in <data_dir>/cache/wasm.
type WASM struct {
	// Dir is the folder of .wasm tools, created (0700) when agcore starts
	// a runtime. Empty means <data_dir>/tools.
	Dir string `yaml:"dir"`
	// MemoryLimitPages caps each tool's memory, in pages of 64 KiB. Zero
	// means 2048 (128 MiB); at most 65536.
	MemoryLimitPages uint32 `yaml:"memory_limit_pages"`
	// Timeout bounds one run of a tool; the tool is stopped when it
	// passes (limits.tool_timeout applies too). Zero means 30s.
	Timeout time.Duration `yaml:"timeout"`
	// OutputLimit caps the standard output kept from one run, in bytes.
	// Zero means 1 MiB.
	OutputLimit int `yaml:"output_limit"`
}

// WebFetch configures the web_fetch tool.
type WebFetch struct {
	// AllowedHosts are the hosts web_fetch may reach, on every redirect
	// too: "docs.example.com", "*.example.com" for any subdomain, "*" for
	// any host. Empty (the default) means none: every fetch is refused.
	AllowedHosts []string `yaml:"allowed_hosts"`
}

// Retry is the retry policy of model calls. The runtime is their only
// retry layer: the providers' own retries do not apply to model calls made
// through it. Only retryable failures are repeated (rate limited, server
// error, timeout, unavailable), with exponential backoff (1 s doubling to
// 30 s, 25 % jitter), 250 ms after an endpoint that cannot be reached, and
// never a wait past the turn's deadline.
type Retry struct {
	// MaxAttempts is the number of attempts of a model call in all, the
	// first one included; 1 disables retrying. Zero means
	// providers.DefaultMaxAttempts (3).
	MaxAttempts int `yaml:"max_attempts"`
	// MaxRetryAfter caps the wait a server asks for with Retry-After.
	// Zero means providers.DefaultMaxRetryAfter (30 s).
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
}

// policy returns the retry policy r describes.
func (r Retry) policy() providers.RetryPolicy {
	return providers.RetryPolicy{MaxAttempts: r.MaxAttempts, MaxRetryAfter: r.MaxRetryAfter}
}

// Serve configures the HTTP API of `agcore serve`; its flags override each
// key (a list flag replaces the file's list). Zero values mean the
// server's defaults, given below.
type Serve struct {
	// CORSOrigins are the web origins ("https://console.example.com")
	// whose pages may call the API across origins (--cors-origin). Empty
	// means none: only pages of the server's own origin, and clients that
	// are not browsers.
	CORSOrigins []string `yaml:"cors_origins"`
	// AllowedHosts are the names ("agents.internal", or with a port,
	// "agents.internal:8443") the Host header may carry besides the listen
	// address, and localhost for a loopback listener (--allowed-host).
	// Empty means none.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// ReadHeaderTimeout bounds the reading of request headers
	// (--read-header-timeout). Zero means 10s.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	// BodyTimeout bounds the reading of a request body (--body-timeout).
	// Zero means 30s.
	BodyTimeout time.Duration `yaml:"body_timeout"`
	// IdleTimeout is how long a keep-alive connection may wait for its
	// next request (--idle-timeout). Zero means 60s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxConnections caps the connections open at once, event streams
	// included (--max-connections). Zero means 512.
	MaxConnections int `yaml:"max_connections"`
}

// Provider is one model endpoint.
type Provider struct {
	// Name is how "provider/model" references name it: 1 to 32 of
	// [a-zA-Z0-9_-]. Required, unique.
	Name string `yaml:"name"`
	// Type is TypeOpenAI or TypeScripted. Required.
	Type string `yaml:"type"`
	// BaseURL is the API root of an openai provider. Empty means
	// https://api.openai.com/v1.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv is the NAME of the environment variable that holds the API
	// key of an openai provider (the key itself never goes in the file).
	// Empty means no key is sent.
	APIKeyEnv string `yaml:"api_key_env"`
	// DefaultModel is the model asked when a reference names only the
	// provider ("openai/"). Empty means the reference must name a model.
	DefaultModel string `yaml:"default_model"`
	// Timeout bounds one attempt of a model call (for a stream, every wait
	// for more of it). Zero means DefaultProviderTimeout.
	Timeout time.Duration `yaml:"timeout"`
	// Script is the script file (.json, .yaml or .yml) of a scripted
	// provider, relative to the config file. Empty means the demo script.
	Script string `yaml:"script"`
	// Stream says whether model calls to this provider stream their
	// replies. Omitted means true; false asks for complete replies (the
	// text arrives as one delta per reply), for endpoints that cannot
	// stream (or cannot stream tool calls), whatever an agent says.
	Stream *bool `yaml:"stream"`
	// StructuredOutput says how a turn's structured answer (run
	// --output-schema, a turn's output_schema over HTTP) is asked of this
	// provider's models: "json_schema" (response_format) or "answer_tool"
	// (a tool the model ends its turn with, for models that cannot do
	// JSON-schema output). Omitted means json_schema.
	StructuredOutput string `yaml:"structured_output"`

	// APIKey is an API key given on the command line (--api-key). It is
	// never read from the file, and wins over APIKeyEnv.
	APIKey string `yaml:"-"`
}

// Model prices one model, in currency units per million tokens.
type Model struct {
	// Name is a model name ("gpt-4o-mini") or a prefix of model names
	// ("gpt-4o" prices "gpt-4o-2024-08-06"). Required, unique.
	Name string `yaml:"name"`
	// InputPerMillion prices prompt tokens not served from a cache.
	InputPerMillion float64 `yaml:"input_per_million"`
	// CachedInputPerMillion prices prompt tokens served from a cache.
	CachedInputPerMillion float64 `yaml:"cached_input_per_million"`
	// OutputPerMillion prices completion tokens.
	OutputPerMillion float64 `yaml:"output_per_million"`
}

// Agent is an agent profile.
type Agent struct {
	// Name identifies the agent (/agent NAME in chat). Required, unique.
	Name string `yaml:"name"`
	// Description says what the agent is for.
	Description string `yaml:"description"`
	// Prompt is the agent's layer of the system prompt, a text/template
	// over Vars and Session, Agent, Turn, Date and Workspace. A variable
	// that is not defined is an error.
	Prompt string `yaml:"prompt"`
	// Vars are the agent's template variables.
	Vars map[string]string `yaml:"vars"`
	// Model is the "provider/model" the agent talks to. Empty means
	// Config.DefaultModel.
	Model string `yaml:"model"`
	// Tools is the allow-list of tool names or patterns ("mcp__fs__*").
	// Omitted means every tool; an empty list means none.
	Tools []string `yaml:"tools"`
	// Retrieve enables retrieved knowledge for the agent.
	Retrieve bool `yaml:"retrieve"`
	// Limits override the global limits field by field; zero fields keep
	// the global value, and mid_turn is always the global one.
	Limits Limits `yaml:"limits"`
	// Stream says whether the agent's model calls stream. Omitted means
	// true; false asks for complete replies. A provider with stream: false
	// (or --no-stream) never streams.
	Stream *bool `yaml:"stream"`
	// Params are the request parameters of the agent's model calls
	// (temperature, max_tokens, tool_choice, response_format, ...).
	// Omitted keys are not sent.
	Params Params `yaml:"params"`
	// StructuredOutput overrides the provider's structured_output for
	// this agent's turns. Omitted keeps the provider's.
	StructuredOutput string `yaml:"structured_output"`
}

// MCPServer is one MCP server. Exactly one of Command and URL is set.
type MCPServer struct {
	// Name prefixes the server's tools (mcp__<name>__<tool>): 1 to 32 of
	// [a-zA-Z0-9_-]. Required, unique.
	Name string `yaml:"name"`
	// Command starts a stdio server, with Args, extra Env entries
	// ("KEY=value") and working directory Dir (empty: agcore's).
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []string `yaml:"env"`
	Dir     string   `yaml:"dir"`
	// URL is a Streamable HTTP endpoint, sent Headers with every request.
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// BearerTokenEnv is the NAME of the environment variable holding a
	// bearer token for URL. Empty means none.
	BearerTokenEnv string `yaml:"bearer_token_env"`
	// BearerToken is a <secret_ref:NAME> placeholder for the bearer token
	// sent to URL, read from the environment variable AGCORE_SECRET_NAME;
	// never the token itself. Header values may hold placeholders too.
	// Empty means none.
	BearerToken string `yaml:"bearer_token"`
	// OAuth runs the MCP authorization flow for URL (see MCPOAuth). Nil
	// means none.
	OAuth *MCPOAuth `yaml:"oauth"`
	// Sampling lets the server ask the default model for completions
	// (sampling/createMessage), each approved like a tool call of
	// mcp__<name>__sampling and counted in the usage. False (the default)
	// refuses them.
	Sampling bool `yaml:"sampling"`
	// Permission is the level the permission pipeline checks for the
	// server's tools: none, read-only, write or execute. Empty means
	// execute.
	Permission string `yaml:"permission"`
	// CallTimeout bounds one tool call. Zero means DefaultMCPCallTimeout.
	CallTimeout time.Duration `yaml:"call_timeout"`
	// StartupTimeout is how long run, chat, serve and tools list wait for
	// the server to connect and list its tools before the first turn (or
	// the listing). Zero means DefaultMCPStartupTimeout.
	StartupTimeout time.Duration `yaml:"startup_timeout"`
	// Required makes a server that is not ready within StartupTimeout an
	// error that stops the command. False (the default) prints a warning
	// naming the server and the reason, and goes on without its tools
	// until it connects.
	Required bool `yaml:"required"`
	// ResourceTools adds the tools mcp__<name>__list_resources and
	// mcp__<name>__read_resource over the server's resources.
	ResourceTools bool `yaml:"resource_tools"`
	// PromptTools adds the tools mcp__<name>__list_prompts and
	// mcp__<name>__get_prompt over the server's prompts.
	PromptTools bool `yaml:"prompt_tools"`
}

// Permissions configure the permission pipeline every tool call passes:
// deny rules, then the mode, then allow rules. A call that would need
// approval waits for an answer through the API of `agcore serve`; run and
// chat ask on the terminal, and without one deny the call. The --allow and
// --deny flags add rules to Allow and Deny.
type Permissions struct {
	// Mode is "ask" (read-only tools run; others need approval),
	// "read-only", "accept-edits" (tools up to write run) or "bypass"
	// (everything that no deny rule stops runs). Empty means the command's
	// default: DefaultPermissionMode for run and chat, and "ask" for
	// serve, which takes approvals through its API.
	Mode string `yaml:"mode"`
	// Allow rules ("bash(go test *)", "write_file(docs/**)") run matching
	// calls without asking.
	Allow []string `yaml:"allow"`
	// Deny rules refuse matching calls in every mode.
	Deny []string `yaml:"deny"`
	// ApprovalTimeout bounds the wait for an answer to a call that needs
	// approval (on the terminal, or through the API of serve). When it
	// passes the approval has expired: the call is denied, journaled and
	// shown as "approval expired". The call's limits.tool_timeout starts
	// only once it is approved. Zero means DefaultApprovalTimeout.
	ApprovalTimeout time.Duration `yaml:"approval_timeout"`
}

// Limits bound what turns and sessions may spend.
type Limits struct {
	// MaxRoundTrips is the number of model calls one turn may make. Zero
	// means DefaultMaxRoundTrips.
	MaxRoundTrips int `yaml:"max_round_trips"`
	// ToolTimeout is the deadline of one tool call. Zero means
	// DefaultToolTimeout.
	ToolTimeout time.Duration `yaml:"tool_timeout"`
	// MaxParallelTools is how many tool calls of one reply run at once.
	// Zero means DefaultMaxParallelTools.
	MaxParallelTools int `yaml:"max_parallel_tools"`
	// MaxTokens is a session's token budget. Zero means unlimited.
	MaxTokens int64 `yaml:"max_tokens"`
	// MaxCost is a session's cost budget, in the prices' currency. Zero
	// means unlimited.
	MaxCost float64 `yaml:"max_cost"`
	// MidTurn says what happens to a message sent while a turn runs:
	// "queue" (the default), "interrupt" or "reject".
	MidTurn string `yaml:"mid_turn"`
}

// Default returns the configuration used when there is no file: an openai
// provider reading OPENAI_API_KEY, the offline "mock" provider, one default
// agent, the command's default permission mode (see Permissions.Mode), the
// default limits and retry policy.
func Default() *Config {
	return &Config{
		Durability:   "sync",
		DefaultModel: DefaultModel,
		Providers: []Provider{
			{Name: "openai", Type: TypeOpenAI, APIKeyEnv: "OPENAI_API_KEY", DefaultModel: "gpt-4o-mini", Timeout: DefaultProviderTimeout},
			{Name: "mock", Type: TypeScripted},
		},
		Sandbox:     Sandbox{Mode: "refuse"},
		Permissions: Permissions{ApprovalTimeout: DefaultApprovalTimeout},
		Limits: Limits{
			MaxRoundTrips:    DefaultMaxRoundTrips,
			ToolTimeout:      DefaultToolTimeout,
			MaxParallelTools: DefaultMaxParallelTools,
			MidTurn:          "queue",
		},
		Retry: Retry{MaxAttempts: providers.DefaultMaxAttempts, MaxRetryAfter: providers.DefaultMaxRetryAfter},
	}
}

// fillDefaults sets the defaults of the fields a file left empty.
func (c *Config) fillDefaults() {
	d := Default()
	if c.Durability == "" {
		c.Durability = d.Durability
	}
	if c.DefaultModel == "" {
		c.DefaultModel = d.DefaultModel
	}
	if c.Providers == nil {
		c.Providers = d.Providers
	}
	for i := range c.Providers {
		if c.Providers[i].Type == TypeOpenAI && c.Providers[i].Timeout == 0 {
			c.Providers[i].Timeout = DefaultProviderTimeout
		}
	}
	for i := range c.MCPServers {
		if c.MCPServers[i].Permission == "" {
			c.MCPServers[i].Permission = "execute"
		}
		if c.MCPServers[i].CallTimeout == 0 {
			c.MCPServers[i].CallTimeout = DefaultMCPCallTimeout
		}
		if c.MCPServers[i].StartupTimeout == 0 {
			c.MCPServers[i].StartupTimeout = DefaultMCPStartupTimeout
		}
	}
	if c.Sandbox.Mode == "" {
		c.Sandbox.Mode = d.Sandbox.Mode
	}
	if c.Permissions.ApprovalTimeout == 0 {
		c.Permissions.ApprovalTimeout = d.Permissions.ApprovalTimeout
	}
	if c.Limits.MaxRoundTrips == 0 {
		c.Limits.MaxRoundTrips = d.Limits.MaxRoundTrips
	}
	if c.Limits.ToolTimeout == 0 {
		c.Limits.ToolTimeout = d.Limits.ToolTimeout
	}
	if c.Limits.MaxParallelTools == 0 {
		c.Limits.MaxParallelTools = d.Limits.MaxParallelTools
	}
	if c.Limits.MidTurn == "" {
		c.Limits.MidTurn = d.Limits.MidTurn
	}
	if c.Retry.MaxAttempts == 0 {
		c.Retry.MaxAttempts = d.Retry.MaxAttempts
	}
	if c.Retry.MaxRetryAfter == 0 {
		c.Retry.MaxRetryAfter = d.Retry.MaxRetryAfter
	}
}

// provider returns the provider named name, or nil.
func (c *Config) provider(name string) *Provider {
	for i := range c.Providers {
		if c.Providers[i].Name == name {
			return &c.Providers[i]
		}
	}
	return nil
}
