package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
)

// Defaults of ServerConfig.
const (
	// DefaultCallTimeout bounds one tool call when ServerConfig.CallTimeout
	// is zero.
	DefaultCallTimeout = 60 * time.Second
	// DefaultInitTimeout bounds starting a server and the initialize
	// handshake when ServerConfig.InitTimeout is zero.
	DefaultInitTimeout = 30 * time.Second
)

var serverNameRE = regexp.MustCompile(`\A[a-zA-Z0-9_-]{1,32}\z`)

// ServerConfig describes one MCP server. Exactly one of Command, URL and
// Transport must be set.
type ServerConfig struct {
	// Name identifies the server: its tools are named mcp__<Name>__<tool>.
	// 1 to 32 of [a-zA-Z0-9_-]. Required.
	Name string `json:"name" yaml:"name"`

	// Command starts a stdio server; Args are its arguments.
	Command string   `json:"command,omitempty" yaml:"command,omitempty"`
	Args    []string `json:"args,omitempty" yaml:"args,omitempty"`
	// Env holds extra "KEY=value" entries added to agcore's own
	// environment for the command.
	Env []string `json:"env,omitempty" yaml:"env,omitempty"`
	// Dir is the command's working directory. Empty means agcore's.
	Dir string `json:"dir,omitempty" yaml:"dir,omitempty"`

	// URL is a Streamable HTTP endpoint ("http://127.0.0.1:3001/mcp").
	URL string `json:"url,omitempty" yaml:"url,omitempty"`
	// Headers are sent with every HTTP request.
	Headers map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	// BearerToken, when set, is sent as "Authorization: Bearer <token>".
	BearerToken string `json:"bearer_token,omitempty" yaml:"bearer_token,omitempty"`
	// OAuth, when set, runs the MCP authorization flow when the server
	// answers 401 (see OAuthConfig). Nil means none. Not with BearerToken.
	OAuth *OAuthConfig `json:"oauth,omitempty" yaml:"oauth,omitempty"`

	// Transport, when set, makes the transport of each connection attempt
	// (an in-process server, a custom carrier). It is called once per
	// attempt; the returned transport is used once.
	Transport func(ctx context.Context) (sdk.Transport, error) `json:"-" yaml:"-"`

	// Permission is the level the permission pipeline checks for this
	// server's tools. Nil means toolsys.PermExecute: a remote tool can do
	// anything its server can, so by default it needs the same approval as
	// a shell command.
	Permission *toolsys.Permission `json:"permission,omitempty" yaml:"permission,omitempty"`
	// TrustReadOnlyHints lowers to toolsys.PermReadOnly the permission of
	// tools the server annotates with readOnlyHint. Only set it for servers
	// you trust: the hint is the server's claim.
	TrustReadOnlyHints bool `json:"trust_read_only_hints,omitempty" yaml:"trust_read_only_hints,omitempty"`

	// CallTimeout bounds one tool call. Zero means DefaultCallTimeout;
	// negative means no limit beyond the caller's context.
	CallTimeout time.Duration `json:"call_timeout,omitempty" yaml:"call_timeout,omitempty"`
	// InitTimeout bounds starting the server and the initialize handshake.
	// Zero means DefaultInitTimeout.
	InitTimeout time.Duration `json:"init_timeout,omitempty" yaml:"init_timeout,omitempty"`

	// Elicit answers the server's questions (elicitation/create); the
	// client then announces the elicitation capability. Nil means the
	// server may not ask.
	Elicit ElicitFunc `json:"-" yaml:"-"`
	// ElicitTimeout bounds how long a question waits for its answer before
	// it is cancelled. Zero means DefaultElicitTimeout.
	ElicitTimeout time.Duration `json:"elicit_timeout,omitempty" yaml:"elicit_timeout,omitempty"`
	// Sampling lets the server ask for model completions
	// (sampling/createMessage), answered by Sample; the client then
	// announces the sampling capability. False (the default) refuses.
	Sampling bool `json:"sampling,omitempty" yaml:"sampling,omitempty"`
	// Sample answers the sampling requests when Sampling is set. Nil
	// refuses them.
	Sample SampleFunc `json:"-" yaml:"-"`
	// Roots are the directories the client offers the server
	// (roots/list), as absolute paths. Empty means none.
	Roots []string `json:"roots,omitempty" yaml:"roots,omitempty"`

	// ResourceTools adds the tools mcp__<Name>__list_resources and
	// mcp__<Name>__read_resource, so that agents can reach the server's
	// resources.
	ResourceTools bool `json:"resource_tools,omitempty" yaml:"resource_tools,omitempty"`
	// PromptTools adds the tools mcp__<Name>__list_prompts and
	// mcp__<Name>__get_prompt.
	PromptTools bool `json:"prompt_tools,omitempty" yaml:"prompt_tools,omitempty"`
}

// ErrInvalidConfig is wrapped by the errors Validate returns.
var ErrInvalidConfig = errors.New("mcp: invalid server config")

// Validate reports the first problem of c, naming the field.
func (c ServerConfig) Validate() error {
	if !serverNameRE.MatchString(c.Name) {
		return fmt.Errorf("%w: Name %q: want 1 to 32 of [a-zA-Z0-9_-]", ErrInvalidConfig, c.Name)
	}
	set := 0
	for _, s := range []bool{c.Command != "", c.URL != "", c.Transport != nil} {
		if s {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("%w: server %s: set exactly one of Command, URL and Transport", ErrInvalidConfig, c.Name)
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: server %s: URL %q: want an http or https URL", ErrInvalidConfig, c.Name, c.URL)
		}
	}
	if c.OAuth != nil && c.URL == "" {
		return fmt.Errorf("%w: server %s: OAuth needs a URL", ErrInvalidConfig, c.Name)
	}
	if c.OAuth != nil && c.BearerToken != "" {
		return fmt.Errorf("%w: server %s: set BearerToken or OAuth, not both", ErrInvalidConfig, c.Name)
	}
	if c.OAuth != nil {
		if err := c.OAuth.validate(); err != nil {
			return fmt.Errorf("%w: server %s: %w", ErrInvalidConfig, c.Name, err)
		}
	}
	if c.Permission != nil && (*c.Permission < toolsys.PermNone || *c.Permission > toolsys.PermExecute) {
		return fmt.Errorf("%w: server %s: Permission %v", ErrInvalidConfig, c.Name, *c.Permission)
	}
	return nil
}

func (c ServerConfig) permission() toolsys.Permission {
	if c.Permission == nil {
		return toolsys.PermExecute
	}
	return *c.Permission
}

func (c ServerConfig) callTimeout() time.Duration {
	if c.CallTimeout == 0 {
		return DefaultCallTimeout
	}
	return c.CallTimeout
}

func (c ServerConfig) initTimeout() time.Duration {
	if c.InitTimeout <= 0 {
		return DefaultInitTimeout
	}
	return c.InitTimeout
}

// Options configures a Client. The zero value is valid.
type Options struct {
	// Logger receives connection diagnostics and the server's stderr
	// lines at debug level. The zero Logger discards them.
	Logger zerolog.Logger
	// OnToolsChanged is called, from a goroutine of the Client, after the
	// tool list was refreshed following notifications/tools/list_changed.
	OnToolsChanged func()
	// ClientVersion is the version agcore announces in initialize. Empty
	// means "dev".
	ClientVersion string
	// OnCatalogChanged is called, from a goroutine of the Client, after
	// the resource and prompt lists were refreshed following a
	// list_changed notification.
	OnCatalogChanged func()
}
