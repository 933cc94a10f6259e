// Command mcp uses the tools of a Model Context Protocol server in an
// agcore session.
//
// The MCP server here is written with the official Go SDK and runs in
// process over its in-memory transport, so the example needs no network
// and no Node.js; a server started as a command (ServerConfig.Command) or
// reached over HTTP (ServerConfig.URL) is configured the same way. The
// runtime connects to it through a supervised connection actor, lists its
// tools and registers them in the registry as mcp__<server>__<tool>, with
// the server's input schema normalised and enforced locally: a call with
// bad arguments is answered with an error result the model can read, and
// never reaches the server. A scripted model then calls the remote tool in
// a session.
//
// Run it with:
//
//	go run ./examples/mcp
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcp:", err)
		os.Exit(1)
	}
}

// ForecastInput is the input of the server's forecast tool; the SDK infers
// the tool's input schema from it.
type ForecastInput struct {
	City string `json:"city" jsonschema:"the city to forecast"`
	Days int    `json:"days,omitempty" jsonschema:"how many days ahead, 1 to 3"`
}

// weatherServer is a third-party MCP server, as its authors would write it
// with the SDK. calls counts the tool calls it received.
func weatherServer(calls *atomic.Int64) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	sdk.AddTool(srv, &sdk.Tool{
		Name:        "forecast",
		Description: "Returns the weather forecast for a city.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *sdk.CallToolRequest, in ForecastInput) (*sdk.CallToolResult, any, error) {
		calls.Add(1)
		days := max(in.Days, 1)
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: fmt.Sprintf("%s, next %d day(s): clear sky, 18°C, light wind", in.City, days)},
		}}, nil, nil
	})
	return srv
}

// inMemory returns a ServerConfig.Transport that connects each attempt to
// srv over a fresh pair of in-memory transports.
func inMemory(srv *sdk.Server) func(ctx context.Context) (sdk.Transport, error) {
	return func(ctx context.Context) (sdk.Transport, error) {
		serverSide, clientSide := sdk.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, serverSide, nil); err != nil {
			return nil, err
		}
		return clientSide, nil
	}
}

func run(ctx context.Context, out io.Writer) (err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var serverCalls atomic.Int64

	// A scripted model that calls the remote tool like any other.
	model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			ToolCalls: []scripted.ToolCall{{Name: "mcp__weather__forecast", Arguments: `{"city":"Oslo","days":2}`}},
		}},
		{Match: scripted.Match{Tool: "mcp__weather__forecast"}, Reply: scripted.Reply{
			Text: "Oslo will be clear and mild, around 18°C, for the next two days.",
		}},
	}}, scripted.Options{})
	if err != nil {
		return err
	}

	// 1. The runtime keeps one supervised connection actor per server
	// (mcp/weather), shared by every session: it reconnects with backoff
	// when the server dies and keeps the registry in step with the
	// server's tools.
	reg := toolsys.NewRegistry(toolsys.Config{})
	rt, err := actors.NewInMemory(actors.Config{
		Provider: model,
		Tools:    reg,
		MCPServers: []mcp.ServerConfig{{
			Name:      "weather",
			Transport: inMemory(weatherServer(&serverCalls)),
			// The server marks forecast read-only; trust it, so that the
			// tool needs read-only permission rather than execute.
			TrustReadOnlyHints: true,
		}},
		Agents: []actors.AgentProfile{{Name: "forecaster", Tools: []string{"mcp__weather__*"}}},
	})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Shutdown(context.WithoutCancel(ctx))) }()
	weather := rt.MCP("weather")
	if err := weather.Ready(ctx); err != nil {
		return err
	}

	st := weather.Status()
	fmt.Fprintf(out, "== connection actor mcp/%s: %s, %d tool(s)\n", st.Name, st.State, st.Tools)
	for _, t := range reg.List() {
		var schema bytes.Buffer
		if err := json.Compact(&schema, t.Schema()); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s (%s): %s\n  schema: %s\n", t.Name(), t.Permission(), t.Description(), schema.String())
	}

	// 2. Arguments are validated against the server's schema before the
	// call is sent.
	fmt.Fprintln(out, "\n== a call with bad arguments")
	res, err := reg.Call(ctx, "mcp__weather__forecast", json.RawMessage(`{"city": 42}`), nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "error result: %v %s\n", res.IsError, res.Content)
	fmt.Fprintf(out, "calls the server received: %d\n", serverCalls.Load())

	// 3. A session uses the remote tool.
	sess, err := rt.Open(ctx, "trip-planning")
	if err != nil {
		return err
	}
	const question = "What will the weather be in Oslo?"
	fmt.Fprintf(out, "\n== a session\nuser:      %s\n", question)
	for ev, err := range sess.Stream(ctx, messages.UserText(question)) {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case messages.ToolStarted:
			fmt.Fprintf(out, "call:      %s %s\n", e.Name, e.Arguments)
		case messages.ToolFinished:
			fmt.Fprintf(out, "result:    %s\n", e.Content)
		case messages.TurnEnded:
			fmt.Fprintf(out, "assistant: %s\n", e.Text)
		}
	}
	fmt.Fprintf(out, "calls the server received: %d\n", serverCalls.Load())
	return nil
}
