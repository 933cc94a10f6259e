package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys"
)

// The names (after mcp__<server>__) of the resource and prompt tools.
const (
	ListResourcesTool = "list_resources"
	ReadResourceTool  = "read_resource"
	ListPromptsTool   = "list_prompts"
	GetPromptTool     = "get_prompt"
)

// NoParams is the parameter struct of tools without parameters.
type NoParams struct{}

// ReadResourceParams are the arguments of mcp__<server>__read_resource.
type ReadResourceParams struct {
	URI string `json:"uri" jsonschema:"description=URI of the resource to read (as list_resources shows it)"`
}

// GetPromptParams are the arguments of mcp__<server>__get_prompt.
type GetPromptParams struct {
	Name      string            `json:"name" jsonschema:"description=Name of the prompt (as list_prompts shows it)"`
	Arguments map[string]string `json:"arguments,omitempty" jsonschema:"description=The prompt's arguments by name"`
}

// extraTools returns the resource and prompt tools cfg asks for. They are
// PermReadOnly: they only read what the server offers.
func extraTools(c caller, cfg ServerConfig) []toolsys.Tool {
	var out []toolsys.Tool
	if cfg.ResourceTools {
		out = append(out,
			toolsys.Bridge[NoParams](&listResourcesTool{c: c, server: cfg.Name}),
			toolsys.Bridge[ReadResourceParams](&readResourceTool{c: c, server: cfg.Name}))
	}
	if cfg.PromptTools {
		out = append(out,
			toolsys.Bridge[NoParams](&listPromptsTool{c: c, server: cfg.Name}),
			toolsys.Bridge[GetPromptParams](&getPromptTool{c: c, server: cfg.Name}))
	}
	return out
}

type listResourcesTool struct {
	c      caller
	server string
}

func (t *listResourcesTool) Name() string { return "mcp__" + t.server + "__" + ListResourcesTool }
func (t *listResourcesTool) Description() string {
	return fmt.Sprintf("Lists the resources of the MCP server %s: one line per resource with its URI, name, MIME type and description.", t.server)
}
func (t *listResourcesTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (t *listResourcesTool) SecretParams() []string         { return nil }

func (t *listResourcesTool) Execute(ctx context.Context, _ NoParams, _ *toolsys.Context) (toolsys.Result, error) {
	rs, err := t.c.ListResources(ctx)
	if err != nil {
		return toolsys.Result{}, err
	}
	if len(rs) == 0 {
		return toolsys.Result{Content: "the server has no resources"}, nil
	}
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s\t%s", r.URI, r.Name)
		if r.MIMEType != "" {
			fmt.Fprintf(&b, "\t%s", r.MIMEType)
		}
		if r.Description != "" {
			fmt.Fprintf(&b, "\t%s", r.Description)
		}
		b.WriteByte('\n')
	}
	return toolsys.Result{Content: b.String(), Metadata: map[string]any{"count": len(rs)}}, nil
}

type readResourceTool struct {
	c      caller
	server string
}

func (t *readResourceTool) Name() string { return "mcp__" + t.server + "__" + ReadResourceTool }
func (t *readResourceTool) Description() string {
	return fmt.Sprintf("Reads a resource of the MCP server %s by URI and returns its text.", t.server)
}
func (t *readResourceTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (t *readResourceTool) SecretParams() []string         { return nil }

func (t *readResourceTool) Execute(ctx context.Context, p ReadResourceParams, _ *toolsys.Context) (toolsys.Result, error) {
	res, err := t.c.ReadResource(ctx, p.URI)
	if err != nil {
		if we, ok := refusal(err); ok {
			return toolsys.ErrorResult("reading %s: %s", p.URI, we), nil
		}
		return toolsys.Result{}, err
	}
	return ResourceResult(res), nil
}

// ResourceResult maps a resources/read reply: the text contents joined
// with "\n" in Content; binary contents described there and kept, base64,
// in Metadata[MetaResources].
func ResourceResult(res *sdk.ReadResourceResult) toolsys.Result {
	if res == nil {
		return toolsys.ErrorResult("the server returned no contents")
	}
	var parts []string
	var md []map[string]any
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		if c.Blob != nil {
			parts = append(parts, fmt.Sprintf("[binary %s, %s, %d bytes]", c.URI, orUnknown(c.MIMEType), len(c.Blob)))
			md = append(md, map[string]any{"uri": c.URI, "mime_type": c.MIMEType, "blob": base64.StdEncoding.EncodeToString(c.Blob)})
			continue
		}
		parts = append(parts, c.Text)
		md = append(md, map[string]any{"uri": c.URI, "mime_type": c.MIMEType})
	}
	r := toolsys.Result{Content: strings.Join(parts, "\n")}
	if len(md) > 0 {
		r.Metadata = map[string]any{MetaResources: md}
	}
	return r
}

type listPromptsTool struct {
	c      caller
	server string
}

func (t *listPromptsTool) Name() string { return "mcp__" + t.server + "__" + ListPromptsTool }
func (t *listPromptsTool) Description() string {
	return fmt.Sprintf("Lists the prompts of the MCP server %s with their arguments.", t.server)
}
func (t *listPromptsTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (t *listPromptsTool) SecretParams() []string         { return nil }

func (t *listPromptsTool) Execute(ctx context.Context, _ NoParams, _ *toolsys.Context) (toolsys.Result, error) {
	ps, err := t.c.ListPrompts(ctx)
	if err != nil {
		return toolsys.Result{}, err
	}
	if len(ps) == 0 {
		return toolsys.Result{Content: "the server has no prompts"}, nil
	}
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Name)
		for _, a := range p.Arguments {
			req := ""
			if a.Required {
				req = ", required"
			}
			fmt.Fprintf(&b, " [%s%s]", a.Name, req)
		}
		if p.Description != "" {
			fmt.Fprintf(&b, ": %s", p.Description)
		}
		b.WriteByte('\n')
	}
	return toolsys.Result{Content: b.String(), Metadata: map[string]any{"count": len(ps)}}, nil
}

type getPromptTool struct {
	c      caller
	server string
}

func (t *getPromptTool) Name() string { return "mcp__" + t.server + "__" + GetPromptTool }
func (t *getPromptTool) Description() string {
	return fmt.Sprintf("Renders a prompt of the MCP server %s with arguments and returns its messages.", t.server)
}
func (t *getPromptTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (t *getPromptTool) SecretParams() []string         { return nil }

func (t *getPromptTool) Execute(ctx context.Context, p GetPromptParams, _ *toolsys.Context) (toolsys.Result, error) {
	res, err := t.c.GetPrompt(ctx, p.Name, p.Arguments)
	if err != nil {
		if we, ok := refusal(err); ok {
			return toolsys.ErrorResult("prompt %s: %s", p.Name, we), nil
		}
		return toolsys.Result{}, err
	}
	return PromptResult(res), nil
}

// PromptResult maps a prompts/get reply: one "role: text" line per text
// message (other content described in brackets).
func PromptResult(res *sdk.GetPromptResult) toolsys.Result {
	if res == nil {
		return toolsys.ErrorResult("the server returned no prompt")
	}
	var b strings.Builder
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		fmt.Fprintf(&b, "%s: ", m.Role)
		switch c := m.Content.(type) {
		case *sdk.TextContent:
			b.WriteString(c.Text)
		case *sdk.EmbeddedResource:
			if c.Resource != nil {
				fmt.Fprintf(&b, "[resource %s] %s", c.Resource.URI, c.Resource.Text)
			}
		default:
			fmt.Fprintf(&b, "[%T]", m.Content)
		}
		b.WriteByte('\n')
	}
	return toolsys.Result{Content: b.String(), Metadata: map[string]any{"description": res.Description, "messages": len(res.Messages)}}
}

// refusal returns the message of an error the server answered a request
// with (an unknown resource, a missing prompt argument).
func refusal(err error) (string, bool) {
	if IsConnectionError(err) {
		return "", false
	}
	if we, ok := asWireError(err); ok {
		return we.Message, true
	}
	return "", false
}
