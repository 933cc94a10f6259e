package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
)

// caller is what the tool adapters need of a server: a Client, or a Conn
// that forwards to its current Client.
type caller interface {
	CallToolProgress(ctx context.Context, name string, args json.RawMessage, onProgress func(Progress)) (*sdk.CallToolResult, error)
	ListResources(ctx context.Context) ([]*sdk.Resource, error)
	ReadResource(ctx context.Context, uri string) (*sdk.ReadResourceResult, error)
	ListPrompts(ctx context.Context) ([]*sdk.Prompt, error)
	GetPrompt(ctx context.Context, name string, args map[string]string) (*sdk.GetPromptResult, error)
}

// emptySchema is the schema of a tool that declares none.
var emptySchema = json.RawMessage(`{"properties":{},"type":"object"}`)

// remoteTool is one remote tool as a toolsys.Tool.
type remoteTool struct {
	caller     caller
	server     string
	remote     string // the server's name for the tool
	name       string // mcp__<server>__<tool>
	desc       string
	schema     json.RawMessage
	required   []string
	validator  *toolsys.Validator
	perm       toolsys.Permission
	idempotent bool
	timeout    time.Duration
}

var _ toolsys.Tool = (*remoteTool)(nil)

// newRemoteTool adapts def. Its input schema is normalised like a typed
// tool's and compiled by the same validator.
func newRemoteTool(c caller, cfg ServerConfig, def *sdk.Tool) (*remoteTool, error) {
	raw := emptySchema
	if def.InputSchema != nil {
		b, err := json.Marshal(def.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
		raw = b
	}
	schema, err := toolsys.NormalizeSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	v, err := toolsys.CompileSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	var shape struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &shape) // a non-list "required" failed to compile above
	t := &remoteTool{
		caller: c, server: cfg.Name, remote: def.Name, name: ToolName(cfg.Name, def.Name),
		desc: def.Description, schema: schema, required: shape.Required, validator: v,
		perm: cfg.permission(), timeout: cfg.callTimeout(),
	}
	if t.desc == "" {
		t.desc = def.Title
	}
	if a := def.Annotations; a != nil {
		t.idempotent = a.IdempotentHint || a.ReadOnlyHint
		if a.ReadOnlyHint && cfg.TrustReadOnlyHints && t.perm > toolsys.PermReadOnly {
			t.perm = toolsys.PermReadOnly
		}
	}
	return t, nil
}

func (t *remoteTool) Name() string                   { return t.name }
func (t *remoteTool) Description() string            { return t.desc }
func (t *remoteTool) Schema() json.RawMessage        { return t.schema }
func (t *remoteTool) Permission() toolsys.Permission { return t.perm }

// SecretParams is empty: secrets are never sent to a remote server.
func (t *remoteTool) SecretParams() []string { return nil }

// Idempotent trusts the server's idempotentHint and readOnlyHint: re-running
// an interrupted call only repeats the request to that server.
func (t *remoteTool) Idempotent() bool { return t.idempotent }

// Execute validates args against the remote schema (an IsError result
// naming the field, and no request, when they are invalid), then calls the
// server within the tool's timeout. The server's isError becomes IsError;
// an error the server answers the request with becomes an IsError result
// too. A timeout, a cancelled ctx or an unavailable server is a Go error
// (a *ServerError naming the server). The server's progress notifications
// for the call go to the call's log and to tc.ReportProgress. The call is
// made as tc's session and call id (WithCaller), unless ctx names a
// Caller already.
func (t *remoteTool) Execute(ctx context.Context, args json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	args, err := toolsys.StripEmptyOptionals(args, t.required)
	if err == nil {
		err = t.validator.Validate(args)
	}
	if err != nil {
		return toolsys.ErrorResult("invalid arguments for tool %s: %v", t.name, err), nil
	}
	if trimmed := bytes.TrimSpace(args); len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		args = json.RawMessage("{}")
	}
	if _, ok := CallerFrom(ctx); !ok && tc != nil {
		ctx = WithCaller(ctx, Caller{Session: tc.SessionID, CallID: tc.CallID})
	}
	cctx := ctx
	if t.timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, t.timeout)
		defer cancel()
	}
	var onProgress func(Progress)
	if tc != nil {
		log := tc.Logger
		onProgress = func(p Progress) {
			log.Info().Str("tool", t.name).Float64("progress", p.Progress).Float64("total", p.Total).
				Str("message", p.Message).Msg("mcp tool progress")
			tc.ReportProgress(toolsys.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
		}
	}
	res, err := t.caller.CallToolProgress(cctx, t.remote, args, onProgress)
	if err != nil {
		return t.failure(ctx, cctx, err)
	}
	return ResultFromMCP(res), nil
}

// failure sorts a failed call into a Go error or an IsError result.
func (t *remoteTool) failure(ctx, cctx context.Context, err error) (toolsys.Result, error) {
	switch {
	case ctx.Err() != nil:
		return toolsys.Result{}, err
	case cctx.Err() != nil:
		return toolsys.Result{}, &ServerError{Server: t.server, Op: "call tool " + t.remote,
			Err: fmt.Errorf("timed out after %s: %w", t.timeout, context.DeadlineExceeded)}
	case IsConnectionError(err) || errors.Is(err, ErrClosed):
		return toolsys.Result{}, err
	}
	if we, ok := asWireError(err); ok {
		return toolsys.ErrorResult("tool %s: the server refused the call: %s", t.name, we.Message), nil
	}
	return toolsys.Result{}, err
}

// asWireError finds the JSON-RPC error a server answered a request with.
func asWireError(err error) (*jsonrpc.Error, bool) {
	return errors.AsType[*jsonrpc.Error](err)
}

// buildTools adapts defs (skipping, with a warning, a tool whose schema
// cannot be compiled or whose name is taken) and adds the resource and
// prompt tools cfg asks for.
func buildTools(c caller, cfg ServerConfig, defs []*sdk.Tool, log zerolog.Logger) []toolsys.Tool {
	seen := map[string]bool{}
	var out []toolsys.Tool
	for _, def := range defs {
		if def == nil {
			continue
		}
		t, err := newRemoteTool(c, cfg, def)
		if err != nil {
			log.Warn().Str("tool", def.Name).Err(err).Msg("mcp: tool left out")
			continue
		}
		if seen[t.name] {
			log.Warn().Str("tool", def.Name).Msg("mcp: tool left out: its name is taken")
			continue
		}
		seen[t.name] = true
		out = append(out, t)
	}
	for _, t := range extraTools(c, cfg) {
		if seen[t.Name()] {
			log.Warn().Str("tool", t.Name()).Msg("mcp: built-in MCP tool left out: the server has a tool of that name")
			continue
		}
		seen[t.Name()] = true
		out = append(out, t)
	}
	return out
}
