package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"slices"
)

// Caller is who makes a tool call: the session and the model's tool call
// id. A server's question or sampling request that arrives while the call
// is in flight can be attributed to it (see Attribution).
type Caller struct {
	// Session is the id of the session that runs the call.
	Session string
	// CallID is the model's id of the tool call.
	CallID string
}

// callerKey is the context key of a Caller.
type callerKey struct{}

// WithCaller returns a context that says the calls made with it are
// caller's. The tool adapters of this package set it from the call's
// toolsys.Context when the context has none.
func WithCaller(ctx context.Context, caller Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// CallerFrom returns the Caller WithCaller stored in ctx.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// Attribution says which session, and which of its tool calls, a server's
// request (a question or a sampling request) belongs to.
//
// Over Streamable HTTP a request the server sends on the response stream
// of a tools/call belongs to that call: the attribution is exact. Any
// other request (stdio, a custom transport, the server's standalone
// stream) belongs to a session only when every call in flight on the
// server is that session's, and to a call only when it is the only one in
// flight; otherwise Session is empty and Candidates lists the sessions it
// may belong to. A request is never attributed to a session on a guess.
type Attribution struct {
	// Session is the session the request belongs to, or "" when it cannot
	// be told.
	Session string
	// CallID is the tool call the request belongs to, or "" when it
	// cannot be told.
	CallID string
	// Candidates are the sessions that had calls in flight on the server
	// when the request arrived, sorted: the one of Session when it is set.
	Candidates []string
	// Exact is true when the transport tied the request to its tool call
	// (Streamable HTTP), false when the rule on the calls in flight did.
	Exact bool
}

// callerMetaKey is the _meta key under which the Streamable HTTP transport
// marks a server's request with the token of the tools/call whose response
// stream carried it (see attributeTransport). The server never sees it.
const callerMetaKey = "agcore/caller"

// callToken is the context key under which CallToolProgress passes the
// call's token to the HTTP transport.
type callToken struct{}

// track registers a tool call in flight under a new token; done forgets
// it. known says whether the call has a Caller.
func (c *Client) track(caller Caller, known bool) (token string, done func()) {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	token = hex.EncodeToString(b[:])
	c.callsMu.Lock()
	if c.calls == nil {
		c.calls = map[string]inflightCall{}
	}
	c.calls[token] = inflightCall{caller: caller, known: known}
	c.callsMu.Unlock()
	return token, func() {
		c.callsMu.Lock()
		delete(c.calls, token)
		c.callsMu.Unlock()
	}
}

// inflightCall is one tool call in flight: its Caller, when it has one.
type inflightCall struct {
	caller Caller
	known  bool
}

// attribute says whom a server request with the given _meta belongs to.
func (c *Client) attribute(meta map[string]any) Attribution {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	if c.exactHTTP {
		if tok, ok := meta[callerMetaKey].(string); ok {
			if call, ok := c.calls[tok]; ok && call.known && call.caller.Session != "" {
				return Attribution{Session: call.caller.Session, CallID: call.caller.CallID,
					Candidates: []string{call.caller.Session}, Exact: true}
			}
		}
	}
	sessions := map[string]bool{}
	unknown := false
	var only Caller
	for _, call := range c.calls {
		if !call.known || call.caller.Session == "" {
			unknown = true
			continue
		}
		sessions[call.caller.Session] = true
		only = call.caller
	}
	a := Attribution{Candidates: slices.Sorted(maps.Keys(sessions))}
	if unknown || len(sessions) != 1 {
		return a
	}
	a.Session = only.Session
	if len(c.calls) == 1 {
		a.CallID = only.CallID
	}
	return a
}
