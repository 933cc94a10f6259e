package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// askerScript makes the model call the asker server's tool, then answer
// its result.
const askerScript = `rules:
  - match: {role: user}
    reply:
      text: "Asking the server."
      tool_calls:
        - {name: mcp__asker__ask, arguments: {}}
  - match: {tool: mcp__asker__ask}
    reply: {text: "The server has its answer."}
`

// startAskerMCP serves, over Streamable HTTP on 127.0.0.1, an MCP server
// whose tool "ask" asks the user for an age, a colour (red or blue) and a
// name (default Ann), and returns the action and the answer.
func startAskerMCP(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	sdk.AddTool(s, &sdk.Tool{Name: "ask"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{
			Message: "Tell me about you",
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"age":   {Type: "integer"},
				"color": {Type: "string", Enum: []any{"red", "blue"}},
				"name":  {Type: "string", Default: json.RawMessage(`"Ann"`)},
			}, Required: []string{"age", "color"}},
		})
		if err != nil {
			return nil, nil, err
		}
		data, _ := json.Marshal(res.Content)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + string(data)}}}, nil, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// askerConfig returns a configuration with the asker server and
// askerScript, and its data directory.
func askerConfig(t *testing.T) (path, data string) {
	t.Helper()
	path, _, data = approvalConfig(t, askerScript)
	cfg := writeConfig(t, "data_dir: "+data+"\nworkspace: .\ndefault_model: mock/scripted\n"+
		"providers:\n  - {name: mock, type: scripted, script: script.yaml}\n"+
		fmt.Sprintf("mcp_servers:\n  - {name: asker, url: %q, permission: read-only}\n", startAskerMCP(t)),
		map[string]string{"script.yaml": askerScript})
	return cfg, data
}

// TestRun_ElicitationOnTerminal answers a server's question on a
// terminal, after the reply streamed before it: each field in turn (a
// value of the wrong type is asked again, Enter keeps the default), then
// accept; the server gets the answer with its default.
func TestRun_ElicitationOnTerminal(t *testing.T) {
	cfg, data := askerConfig(t)
	s := startCLI(t, true, "--config", cfg, "run", "ask me")
	s.waitFor(t, "Asking the server.")
	s.waitFor(t, "? MCP server asker asks: Tell me about you")
	// Typed ahead, while the output is read: each line answers the next
	// field as it is asked.
	typed := make(chan error, 1)
	go func() {
		_, err := io.WriteString(s.stdin, "forty\n41\nblue\n\na\n")
		typed <- err
	}()
	s.waitFor(t, "accept sent to asker")
	if err := <-typed; err != nil {
		t.Fatal(err)
	}
	code, out := s.wait(t)
	if code != exitOK {
		t.Fatalf("exit code %d\n%s\nstderr:\n%s", code, out, s.stderr.String())
	}
	for _, want := range []string{`want a whole number, got "forty"`, "color [red blue]", `name ["Ann"]`, "The server has its answer."} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	results := toolResults(t, data)
	if len(results) != 1 || results[0] != `accept {"age":41,"color":"blue","name":"Ann"}` {
		t.Fatalf("tool results %q, want the accepted answer with its default", results)
	}
}

// TestRun_ElicitationWithoutTerminal cancels a server's question when no
// one can answer it, and says why on standard error.
func TestRun_ElicitationWithoutTerminal(t *testing.T) {
	cfg, data := askerConfig(t)
	code, stdout, stderr := runCLIInput(t.Context(), t, nil, "41\nblue\n\na\n", "--config", cfg, "run", "ask me")
	if code != exitOK {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "asks: Tell me about you") {
		t.Errorf("asked without a terminal:\n%s", stdout)
	}
	for _, want := range []string{"MCP server asker asked a question (Tell me about you)", "standard input is not a terminal", "it was cancelled"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if results := toolResults(t, data); len(results) != 1 || results[0] != "cancel null" {
		t.Fatalf("tool results %q, want the server to get cancel", results)
	}
}
