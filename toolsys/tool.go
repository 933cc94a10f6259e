package toolsys

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
)

// Permission is how much a tool may do. Levels are ordered:
// None < ReadOnly < Write < Execute.
type Permission int

// The permission levels.
const (
	PermNone Permission = iota
	PermReadOnly
	PermWrite
	PermExecute
)

// String returns the level's name: "none", "read-only", "write" or "execute".
func (p Permission) String() string {
	switch p {
	case PermNone:
		return "none"
	case PermReadOnly:
		return "read-only"
	case PermWrite:
		return "write"
	case PermExecute:
		return "execute"
	}
	return fmt.Sprintf("permission(%d)", int(p))
}

// ParsePermission parses the names String returns.
func ParsePermission(s string) (Permission, error) {
	switch s {
	case "none":
		return PermNone, nil
	case "read-only", "readonly", "read":
		return PermReadOnly, nil
	case "write":
		return PermWrite, nil
	case "execute", "exec":
		return PermExecute, nil
	}
	return 0, fmt.Errorf("unknown permission %q (want none, read-only, write or execute)", s)
}

// Source says where a tool comes from. The registry keeps it per tool
// (WithSource) and reports it in ToolInfo and Stats; the CLI shows it.
type Source string

// The sources of tools.
const (
	// SourceBuiltin is a tool compiled into the program: agcore's
	// built-in tools and the Go tools a program embedding agcore
	// registers. It is the source of a tool registered without
	// WithSource.
	SourceBuiltin Source = "builtin"
	// SourceWASM is a WebAssembly tool loaded from a folder
	// (toolsys/wasm).
	SourceWASM Source = "wasm"
	// SourceMCP is a tool of an MCP server (toolsys/mcp).
	SourceMCP Source = "mcp"
	// SourceRuntime is a tool the agent runtime provides itself
	// (sub-agents, retrieval).
	SourceRuntime Source = "runtime"
	// SourceSchedule is a tool that manages scheduled agent runs.
	SourceSchedule Source = "schedule"
)

// String returns the source's name.
func (s Source) String() string { return string(s) }

// Result is what a tool call gives back to the model.
type Result struct {
	// Content is the text the model reads.
	Content string `json:"content"`
	// IsError marks a failure the model should read and may correct (a
	// missing file, bad arguments). A fault of the runtime is a Go error
	// instead.
	IsError bool `json:"is_error,omitempty"`
	// Metadata is structured output for front ends (diff stats, exit code,
	// line counts). The model does not see it.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ErrorResult returns a Result with IsError set and the formatted text.
func ErrorResult(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Tool is a tool as the registry holds it: type-erased, taking raw JSON
// arguments. Implementations must be safe for concurrent use. Authors
// normally write a Typed[P] and register Bridge[P](t) instead.
type Tool interface {
	// Name is the tool's unique name ([a-zA-Z0-9_-], at most 64 characters).
	Name() string
	// Description tells the model what the tool does and when to use it.
	Description() string
	// Schema is the normalised JSON Schema of the arguments (an object).
	Schema() json.RawMessage
	// Permission is the level the permission pipeline checks.
	Permission() Permission
	// SecretParams names the top-level parameters that may carry
	// <secret_ref:NAME> placeholders. A placeholder anywhere else is rejected.
	SecretParams() []string
	// Idempotent reports whether running the same call twice is harmless.
	// Crash recovery re-runs an interrupted call only when the tool is
	// idempotent or its permission is at most PermReadOnly.
	Idempotent() bool
	// Execute runs the call. A failure the model should read is a Result
	// with IsError; a returned error is a fault of the runtime.
	Execute(ctx context.Context, args json.RawMessage, tc *Context) (Result, error)
}

// Typed is what a tool author writes: a parameter struct P is both the
// schema the model sees and the parser of its arguments. Wrap it with
// Bridge[P] to get a Tool.
//
// A Typed may also implement Prechecker[P] (reject a call before it runs) and
// IdempotentTool (declare itself safe to re-run).
type Typed[P any] interface {
	Name() string
	Description() string
	Permission() Permission
	// SecretParams is mandatory: every tool decides which of its parameters
	// may receive secrets (most return nil).
	SecretParams() []string
	Execute(ctx context.Context, params P, tc *Context) (Result, error)
}

// Prechecker is implemented by a Typed tool that validates its parameters
// beyond the schema. A non-nil error rejects the call before Execute, and its
// text is returned to the model as an IsError result.
type Prechecker[P any] interface {
	Precheck(params P) error
}

// IdempotentTool is implemented by a tool that declares whether it is safe to
// run twice. A tool that does not implement it is idempotent only when its
// permission is at most PermReadOnly.
type IdempotentTool interface {
	Idempotent() bool
}

// CostTracker receives the usage of model calls a tool makes itself (a
// sub-agent, a summariser). It must be safe for concurrent use.
type CostTracker interface {
	Record(model string, usage messages.Usage) float64
}

// Context is what a tool knows about the call it serves. It is read-only for
// the tool. Cancellation comes through the ctx passed to Execute.
type Context struct {
	// SessionID is the session the call belongs to.
	SessionID string
	// Turn is the 0-based turn index.
	Turn int
	// Agent is the agent profile the session runs; empty outside a
	// runtime. Tools that keep data per agent (the memory tools) read it.
	Agent string
	// CallID is the model's id of this tool call.
	CallID string
	// Workspace confines file access; nil means the tool may not touch files.
	Workspace *Workspace
	// Logger is narrowed to the call; the zero Logger discards.
	Logger zerolog.Logger
	// Costs records model usage made by the tool; nil means not tracked.
	Costs CostTracker
	// AllowedHosts lists the hosts outbound requests may reach ("*" = any,
	// "*.example.com" = any subdomain). Empty means no outbound requests.
	AllowedHosts []string
	// Progress receives the call's progress reports (see ReportProgress);
	// the runtime sets it to publish them on the turn's stream. Nil drops
	// them.
	Progress func(Progress)
}

// Progress is how far a call in flight has got, as its tool reports it.
type Progress struct {
	// Progress is how far the call is; it grows with each report.
	Progress float64
	// Total is the amount of work when the tool knows it; zero means unknown.
	Total float64
	// Message says what the tool is doing, when it says.
	Message string
}

// ReportProgress passes p to the Progress hook, if there is one. It is safe
// on a nil Context and may be called from any goroutine while the call runs.
func (c *Context) ReportProgress(p Progress) {
	if c == nil || c.Progress == nil {
		return
	}
	c.Progress(p)
}

// HostAllowed reports whether outbound requests may reach host under
// AllowedHosts: "*" allows any host, "*.example.com" any subdomain of
// example.com (not example.com itself), anything else one host exactly.
// Matching ignores case, a trailing dot and a port ("example.com:443"). A
// nil Context or an empty host allows nothing.
func (c *Context) HostAllowed(host string) bool {
	if c == nil {
		return false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	for _, pattern := range c.AllowedHosts {
		p := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(pattern)), ".")
		switch {
		case p == "*":
			return true
		case strings.HasPrefix(p, "*."):
			if suffix := p[1:]; len(host) > len(suffix) && strings.HasSuffix(host, suffix) {
				return true
			}
		case p != "" && p == host:
			return true
		}
	}
	return false
}
