package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
)

// ToolSet is what a server exposes: *toolsys.Registry and *toolsys.View
// implement it. Calls go through its Call, so the registry's permission
// pipeline, secrets, sandbox and output cap apply.
type ToolSet interface {
	List() []toolsys.Tool
	Call(ctx context.Context, name string, args json.RawMessage, tc *toolsys.Context) (toolsys.Result, error)
}

// MetaKey is the _meta key under which a served tool's Result.Metadata is
// returned.
const MetaKey = "agcore/metadata"

// ServeOptions configures a server. The zero value is valid.
type ServeOptions struct {
	// Name and Version identify the server to clients. Empty means
	// "agcore" and "dev".
	Name, Version string
	// Workspace is the sandbox of every call's toolsys.Context. Nil means
	// file tools refuse to run.
	Workspace *toolsys.Workspace
	// AllowedHosts are the hosts outbound tools may reach (see
	// toolsys.Context). Empty means none.
	AllowedHosts []string
	// SessionID is the toolsys.Context.SessionID of the calls. Empty means
	// "mcp".
	SessionID string
	// Logger receives one debug line per call. The zero Logger discards.
	Logger zerolog.Logger
}

// NewServer returns an MCP server offering the tools in set when it is
// created, with their schemas; a tools/call runs through set.Call.
func NewServer(set ToolSet, opts ServeOptions) *sdk.Server {
	name, version := opts.Name, opts.Version
	if name == "" {
		name = "agcore"
	}
	if version == "" {
		version = "dev"
	}
	if opts.SessionID == "" {
		opts.SessionID = "mcp"
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: name, Version: version}, &sdk.ServerOptions{Capabilities: &sdk.ServerCapabilities{}})
	var calls atomic.Int64
	for _, t := range set.List() {
		srv.AddTool(serverTool(t), serveHandler(set, t.Name(), opts, &calls))
	}
	return srv
}

// serverTool describes t to MCP clients.
func serverTool(t toolsys.Tool) *sdk.Tool {
	readOnly := t.Permission() <= toolsys.PermReadOnly
	destructive := !readOnly
	return &sdk.Tool{
		Name:        t.Name(),
		Description: t.Description(),
		InputSchema: t.Schema(),
		Annotations: &sdk.ToolAnnotations{
			ReadOnlyHint:    readOnly,
			IdempotentHint:  t.Idempotent(),
			DestructiveHint: &destructive,
		},
	}
}

// serveHandler runs one tools/call through set.Call. A refusal, bad
// arguments or a failing tool come back as an isError result; so does a
// fault of the runtime, with its message. Only the end of ctx is a
// protocol error.
func serveHandler(set ToolSet, name string, opts ServeOptions, calls *atomic.Int64) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		n := calls.Add(1)
		tc := &toolsys.Context{
			SessionID:    opts.SessionID,
			CallID:       fmt.Sprintf("mcp-%d", n),
			Workspace:    opts.Workspace,
			AllowedHosts: opts.AllowedHosts,
			Logger:       opts.Logger.With().Str("tool", name).Logger(),
		}
		res, err := set.Call(ctx, name, args, tc)
		opts.Logger.Debug().Str("tool", name).Bool("is_error", res.IsError).AnErr("error", err).Msg("mcp: served call")
		if err != nil {
			if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
				return nil, err
			}
			res = toolsys.ErrorResult("%v", err)
		}
		out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Content}}, IsError: res.IsError}
		if len(res.Metadata) > 0 {
			out.Meta = sdk.Meta{MetaKey: res.Metadata}
		}
		return out, nil
	}
}

// Serve serves set over t (sdk.StdioTransport for `agcore mcp serve`)
// until the client disconnects or ctx ends.
func Serve(ctx context.Context, set ToolSet, opts ServeOptions, t sdk.Transport) error {
	err := NewServer(set, opts).Run(ctx, t)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// HTTPHandler serves set over Streamable HTTP. Each new MCP session gets a
// server built from set as it stands then. Listen on a loopback address
// unless the permission pipeline is meant for remote callers.
func HTTPHandler(set ToolSet, opts ServeOptions) http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return NewServer(set, opts) }, nil)
}
