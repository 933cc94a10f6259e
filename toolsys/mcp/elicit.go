package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultElicitTimeout bounds how long a server's question waits for an
// answer when ServerConfig.ElicitTimeout is zero.
const DefaultElicitTimeout = 10 * time.Minute

// ErrElicitationInvalid is wrapped by the error ApplyElicitationSchema
// returns for content that does not match the requested schema.
var ErrElicitationInvalid = errors.New("the answer does not match the requested schema")

// ElicitAction is how the user answered a server's question.
type ElicitAction string

// The answers to an elicitation.
const (
	// ElicitAccept: the user answered; Content holds the answer.
	ElicitAccept ElicitAction = "accept"
	// ElicitDecline: the user refused to answer.
	ElicitDecline ElicitAction = "decline"
	// ElicitCancel: the question was dismissed without a choice (or it
	// expired).
	ElicitCancel ElicitAction = "cancel"
)

// Elicitation is a question an MCP server asks the user during a request
// (elicitation/create).
type Elicitation struct {
	// Server is the server's configured name.
	Server string
	// Message is the server's question.
	Message string
	// Mode is "form" (answer Schema) or "url" (open URL).
	Mode string
	// Schema is the requested schema in form mode: an object whose
	// properties are strings, numbers, integers, booleans or enums, with
	// defaults. Nil in URL mode.
	Schema *jsonschema.Schema
	// URL is the page the server asks the user to open, in URL mode.
	URL string
	// Attribution says which session and tool call the question belongs
	// to, or, when that cannot be told, which sessions it may.
	Attribution
}

// Fields returns the names of Schema's properties, sorted.
func (e Elicitation) Fields() []string {
	if e.Schema == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(e.Schema.Properties))
}

// ElicitAnswer is the user's answer.
type ElicitAnswer struct {
	Action ElicitAction
	// Content is the answer in form mode, for ElicitAccept. Missing
	// fields take the schema's defaults.
	Content map[string]any
}

// ElicitFunc asks the user a server's question and returns the answer, or
// an error (which the server receives as a cancellation) when no one can
// answer. It is called from the connection's goroutines, possibly
// concurrently; ctx ends when the question expires.
type ElicitFunc func(ctx context.Context, q Elicitation) (ElicitAnswer, error)

// ApplyElicitationSchema fills the fields content lacks with the schema's
// defaults and validates the result. An error wraps ErrElicitationInvalid
// and names the field.
func ApplyElicitationSchema(schema *jsonschema.Schema, content map[string]any) (map[string]any, error) {
	out := maps.Clone(content)
	if out == nil {
		out = map[string]any{}
	}
	if schema == nil {
		return out, nil
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%w: the schema: %w", ErrElicitationInvalid, err)
	}
	if err := resolved.ApplyDefaults(&out); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrElicitationInvalid, err)
	}
	if err := resolved.Validate(out); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrElicitationInvalid, err)
	}
	return out, nil
}

// elicitationSchema converts the wire schema of a request.
func elicitationSchema(wire any) (*jsonschema.Schema, error) {
	if wire == nil {
		return nil, nil
	}
	if s, ok := wire.(*jsonschema.Schema); ok {
		return s, nil
	}
	data, err := json.Marshal(wire)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// elicit answers elicitation/create through cfg.Elicit, within the
// question's time limit. The answer is checked against the schema, with
// its defaults applied; an answer that does not fit is refused, and the
// server gets an error naming the field.
func (c *Client) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	p := req.Params
	schema, err := elicitationSchema(p.RequestedSchema)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("requestedSchema: %v", err)}
	}
	mode := p.Mode
	if mode == "" {
		mode = "form"
	}
	q := Elicitation{Server: c.cfg.Name, Message: p.Message, Mode: mode, Schema: schema, URL: p.URL, Attribution: c.attribute(p.Meta)}
	timeout := c.cfg.ElicitTimeout
	if timeout <= 0 {
		timeout = DefaultElicitTimeout
	}
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c.log.Info().Str("mode", mode).Strs("fields", q.Fields()).Str("session", q.Session).Str("call_id", q.CallID).
		Bool("exact", q.Exact).Strs("candidates", q.Candidates).Msg("mcp: the server asks the user a question")
	ans, err := c.cfg.Elicit(qctx, q)
	if err != nil {
		c.log.Warn().Err(err).Msg("mcp: the server's question was not answered; cancelled")
		return &sdk.ElicitResult{Action: string(ElicitCancel)}, nil
	}
	switch ans.Action {
	case ElicitAccept:
	case ElicitDecline, ElicitCancel:
		c.log.Info().Str("action", string(ans.Action)).Msg("mcp: the server's question was answered")
		return &sdk.ElicitResult{Action: string(ans.Action)}, nil
	default:
		return nil, fmt.Errorf("mcp server %s: elicitation answer: unknown action %q", c.cfg.Name, ans.Action)
	}
	content := ans.Content
	if mode == "form" {
		if content, err = ApplyElicitationSchema(schema, ans.Content); err != nil {
			c.log.Warn().Err(err).Msg("mcp: the answer to the server's question was refused")
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
	}
	c.log.Info().Str("action", string(ans.Action)).Strs("fields", slices.Sorted(maps.Keys(content))).Msg("mcp: the server's question was answered")
	return &sdk.ElicitResult{Action: string(ElicitAccept), Content: content}, nil
}
