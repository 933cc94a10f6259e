package httpapi_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// askSchema is the form of the asker's questions: an age (required) and
// a name (default "Ann").
func askSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"name": {Type: "string", Default: json.RawMessage(`"Ann"`), Description: "What to call you"},
		"age":  {Type: "integer", Title: "Age"},
	}, Required: []string{"age"}}
}

// asker is an in-process MCP server whose tool "ask" asks the user its
// form and returns the action and the answer; askNow makes it ask while
// no call is in flight, a question of no single session.
type asker struct {
	server *sdk.Server

	mu       sync.Mutex
	sessions []*sdk.ServerSession
}

func newAsker(t testing.TB) *asker {
	a := &asker{server: sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"},
		&sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})}
	sdk.AddTool(a.server, &sdk.Tool{Name: "ask"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "How old are you?", RequestedSchema: askSchema()})
		if err != nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "elicit: " + err.Error()}}}, nil, nil
		}
		data, _ := json.Marshal(res.Content)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + string(data)}}}, nil, nil
	})
	t.Cleanup(func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, s := range a.sessions {
			_ = s.Close()
		}
	})
	return a
}

// config returns the server's configuration, named "ask", whose tools run
// without approval.
func (a *asker) config() mcp.ServerConfig {
	perm := toolsys.PermReadOnly
	return mcp.ServerConfig{Name: "ask", Permission: &perm, Transport: func(ctx context.Context) (sdk.Transport, error) {
		st, ct := sdk.NewInMemoryTransports()
		ss, err := a.server.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		a.mu.Lock()
		a.sessions = append(a.sessions, ss)
		a.mu.Unlock()
		return ct, nil
	}}
}

// askNow makes the server ask a question outside of any call; the answer's
// action is sent on the returned channel.
func (a *asker) askNow(ctx context.Context) <-chan string {
	out := make(chan string, 1)
	a.mu.Lock()
	ss := a.sessions[len(a.sessions)-1]
	a.mu.Unlock()
	go func() {
		res, err := ss.Elicit(ctx, &sdk.ElicitParams{Message: "Anyone there?", RequestedSchema: askSchema()})
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		out <- res.Action
	}()
	return out
}
