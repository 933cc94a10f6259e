package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// requestsDuringCalls makes a server speak protocol 2025-11-25, under
// which it sends its own requests (elicitation/create, roots/list) while
// serving a call, as the servers in use today do.
var requestsDuringCalls = &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}}

// asker is a server whose tool "ask" elicits a name (default "Ann") and an
// age, and reports what it received.
func asker(t *testing.T) *inMemory {
	return newInMemoryWith(t, requestsDuringCalls, func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "ask"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{
				Message: "Who are you?",
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
					"name": {Type: "string", Default: json.RawMessage(`"Ann"`)},
					"age":  {Type: "integer"},
				}, Required: []string{"age"}},
			})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "elicit: " + err.Error()}}}, nil, nil
			}
			data, _ := json.Marshal(res.Content)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + string(data)}}}, nil, nil
		})
	})
}

func resultText(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestClient_Elicitation routes a server's question to ServerConfig.Elicit
// and returns the answer with the schema's defaults applied; a refusal, a
// question that expires, and an answer that does not fit the schema reach
// the server as such.
func TestClient_Elicitation(t *testing.T) {
	tests := []struct {
		name   string
		answer func(ctx context.Context, q mcp.Elicitation) (mcp.ElicitAnswer, error)
		want   string
	}{
		{"accept with defaults", func(_ context.Context, q mcp.Elicitation) (mcp.ElicitAnswer, error) {
			if q.Message != "Who are you?" || q.Server != "asker" || fmt.Sprint(q.Fields()) != "[age name]" {
				return mcp.ElicitAnswer{}, fmt.Errorf("unexpected question %+v", q)
			}
			return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: map[string]any{"age": 7}}, nil
		}, `accept {"age":7,"name":"Ann"}`},
		{"decline", func(context.Context, mcp.Elicitation) (mcp.ElicitAnswer, error) {
			return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
		}, "decline null"},
		{"expired", func(ctx context.Context, _ mcp.Elicitation) (mcp.ElicitAnswer, error) {
			<-ctx.Done()
			return mcp.ElicitAnswer{}, ctx.Err()
		}, "cancel null"},
		{"invalid answer", func(context.Context, mcp.Elicitation) (mcp.ElicitAnswer, error) {
			return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: map[string]any{"age": "old"}}, nil
		}, "elicit: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := asker(t).config("asker")
			cfg.Elicit = tc.answer
			cfg.ElicitTimeout = time.Millisecond // only the expiring answer waits for it
			c := connect(t, cfg)
			res, err := c.CallTool(t.Context(), "ask", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(t, res); !strings.HasPrefix(got, tc.want) {
				t.Errorf("the server received %q, want %q", got, tc.want)
			}
		})
	}
}

// TestClient_NoElicitationWithoutHandler announces no elicitation
// capability when nothing can answer, so the server's question fails.
func TestClient_NoElicitationWithoutHandler(t *testing.T) {
	c := connect(t, asker(t).config("asker"))
	res, err := c.CallTool(t.Context(), "ask", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); !strings.Contains(got, "elicit") || !res.IsError {
		t.Errorf("the server's question succeeded without a handler: %q", got)
	}
}

// TestApplyElicitationSchema applies defaults and names the field that
// does not fit.
func TestApplyElicitationSchema(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"color": {Type: "string", Enum: []any{"red", "blue"}, Default: json.RawMessage(`"red"`)},
		"n":     {Type: "number"},
	}}
	got, err := mcp.ApplyElicitationSchema(schema, map[string]any{"n": 1.5})
	if err != nil || got["color"] != "red" || got["n"] != 1.5 {
		t.Errorf("ApplyElicitationSchema = %v, %v; want the default color and n", got, err)
	}
	_, err = mcp.ApplyElicitationSchema(schema, map[string]any{"color": "green"})
	if err == nil || !strings.Contains(err.Error(), "color") {
		t.Errorf("ApplyElicitationSchema of an answer off the enum: %v, want an error naming color", err)
	}
}

// TestClient_ProgressLogsRoots passes a call's progress notifications to
// its callback, writes the server's log messages to the logger at the
// mapped level, and answers roots/list with the configured roots.
func TestClient_ProgressLogsRoots(t *testing.T) {
	// Notifications are handled concurrently with the reply: the tool goes
	// on once the client has seen each.
	logs := syncBuffer{wait: "mcp server log", seen: make(chan struct{})}
	progressed := make(chan struct{})
	wait := func(ctx context.Context, ch <-chan struct{}) {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
	srv := newInMemoryWith(t, requestsDuringCalls, func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "work"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= 2; i++ {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2, Message: fmt.Sprint("step ", i)}); err != nil {
					return nil, nil, err
				}
			}
			wait(ctx, progressed)
			if err := req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Logger: "disk", Data: "disk almost full"}); err != nil {
				return nil, nil, err
			}
			wait(ctx, logs.seen)
			roots, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, err
			}
			var uris []string
			for _, r := range roots.Roots {
				uris = append(uris, r.URI)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(uris, ",")}}}, nil, nil
		})
	})
	dir := t.TempDir()
	cfg := srv.config("worker")
	cfg.Roots = []string{dir}
	c, err := mcp.Connect(t.Context(), cfg, mcp.Options{Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var got []mcp.Progress
	res, err := c.CallToolProgress(t.Context(), "work", nil, func(p mcp.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
		if len(got) == 2 {
			close(progressed)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := (&url.URL{Scheme: "file", Path: dir}).String()
	if text := resultText(t, res); text != want {
		t.Errorf("roots/list answered %q, want %q", text, want)
	}
	mu.Lock()
	if len(got) != 2 || got[1].Progress != 2 || got[1].Total != 2 || got[1].Message != "step 2" {
		t.Errorf("progress = %+v, want steps 1 and 2 of 2", got)
	}
	mu.Unlock()
	line := logs.line("mcp server log")
	if !strings.Contains(line, `"level":"warn"`) || !strings.Contains(line, `"data":"disk almost full"`) || !strings.Contains(line, `"mcp_logger":"disk"`) {
		t.Errorf("server log line %q, want level warn with the data and logger", line)
	}
}

// syncBuffer is a bytes.Buffer safe for the connection's goroutines.
// When wait is set, seen is closed once a write holds it.
type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	wait string
	seen chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wait != "" && bytes.Contains(p, []byte(s.wait)) {
		close(s.seen)
		s.wait = ""
	}
	return s.b.Write(p)
}

// line returns the first line holding msg.
func (s *syncBuffer) line(msg string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range strings.Split(s.b.String(), "\n") {
		if strings.Contains(l, msg) {
			return l
		}
	}
	return ""
}

// TestTool_ProgressInTheCallLog writes a remote tool's progress
// notifications to the logger of the call.
func TestTool_ProgressInTheCallLog(t *testing.T) {
	// The tool ends once its progress is in the log: notifications are
	// handled concurrently with the reply, and one that arrives after the
	// call has returned is dropped.
	logs := syncBuffer{wait: "mcp tool progress", seen: make(chan struct{})}
	srv := newInMemory(t, func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "slow"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 4, Message: "indexing"})
			select {
			case <-logs.seen:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, err
		})
	})
	c := connect(t, srv.config("w"))
	tool := findTool(t, c.Tools(), "mcp__w__slow")
	res, err := tool.Execute(t.Context(), json.RawMessage(`{}`), &toolsys.Context{Logger: zerolog.New(&logs)})
	if err != nil || res.IsError {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	line := logs.line("mcp tool progress")
	if !strings.Contains(line, `"progress":1`) || !strings.Contains(line, `"total":4`) || !strings.Contains(line, `"message":"indexing"`) {
		t.Errorf("progress log line %q, want progress 1 of 4, indexing", line)
	}
}

// TestClient_Sampling passes a server's sampling request to
// ServerConfig.Sample in agcore's chat model (the system prompt first,
// roles kept) and refuses content that is not text.
func TestClient_Sampling(t *testing.T) {
	srv := newInMemoryWith(t, requestsDuringCalls, func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "sample"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
			Image bool `json:"image,omitempty"`
		}) (*sdk.CallToolResult, any, error) {
			var last sdk.Content = &sdk.TextContent{Text: "and you?"}
			if in.Image {
				last = &sdk.ImageContent{MIMEType: "image/png", Data: []byte{1}}
			}
			res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 20, SystemPrompt: "Be brief.", Temperature: 0.5,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hi"}}, {Role: "assistant", Content: &sdk.TextContent{Text: "hello"}}, {Role: "user", Content: last}}})
			if err != nil {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil, nil
			}
			return &sdk.CallToolResult{Content: []sdk.Content{res.Content, &sdk.TextContent{Text: " model=" + res.Model + " stop=" + res.StopReason}}}, nil, nil
		})
	})
	cfg := srv.config("s")
	cfg.Sampling = true
	var got mcp.SampleRequest
	cfg.Sample = func(_ context.Context, req mcp.SampleRequest) (mcp.SampleResult, error) {
		got = req
		return mcp.SampleResult{Text: "fine", Model: "m1"}, nil
	}
	c := connect(t, cfg)
	res, err := c.CallTool(t.Context(), "sample", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(t, res); text != "fine model=m1 stop=endTurn" {
		t.Errorf("the server got %q", text)
	}
	var roles []string
	for _, m := range got.Messages {
		roles = append(roles, string(m.Role)+":"+m.Text())
	}
	if strings.Join(roles, " ") != "system:Be brief. user:hi assistant:hello user:and you?" || got.MaxTokens != 20 || got.Temperature == nil || *got.Temperature != 0.5 {
		t.Errorf("sample request %v, max %d, temperature %v", roles, got.MaxTokens, got.Temperature)
	}
	res, err = c.CallTool(t.Context(), "sample", json.RawMessage(`{"image":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(t, res); !res.IsError || !strings.Contains(text, "only text content can be sampled") {
		t.Errorf("an image was sampled: %q", text)
	}
}

// TestClient_ResourceAndPromptListsFollowTheServer lists the resources
// and prompts again when the server says they changed.
func TestClient_ResourceAndPromptListsFollowTheServer(t *testing.T) {
	var server *sdk.Server
	srv := newInMemory(t, func(s *sdk.Server) {
		server = s
		s.AddResource(&sdk.Resource{URI: "test://a", Name: "a"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{}, nil
		})
		s.AddPrompt(&sdk.Prompt{Name: "p1"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{}, nil
		})
	})
	changed := make(chan struct{}, 8)
	c, err := mcp.Connect(t.Context(), srv.config("lists"), mcp.Options{OnCatalogChanged: func() { changed <- struct{}{} }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	server.AddResource(&sdk.Resource{URI: "test://b", Name: "b"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{}, nil
	})
	server.AddPrompt(&sdk.Prompt{Name: "p2"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{}, nil
	})
	// The bound only turns lists that never follow into a failure.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for len(c.Resources()) != 2 || len(c.Prompts()) != 2 {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("resources %d, prompts %d; want 2 each", len(c.Resources()), len(c.Prompts()))
		}
	}
}

// TestTool_ProgressReachesTheContextHook passes a remote tool's progress
// notifications to the call's toolsys.Context.Progress hook, in order.
func TestTool_ProgressReachesTheContextHook(t *testing.T) {
	// The server ends the call once the client has seen its last report:
	// a notification that arrives after the reply is dropped.
	seen := make(chan struct{})
	srv := newInMemory(t, func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "slow"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			for i := 1; i <= 3; i++ {
				if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: fmt.Sprint("step ", i)}); err != nil {
					return nil, nil, err
				}
			}
			select {
			case <-seen:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
		})
	})
	c := connect(t, srv.config("w"))
	tool := findTool(t, c.Tools(), "mcp__w__slow")
	var mu sync.Mutex
	var got []toolsys.Progress
	tc := &toolsys.Context{Progress: func(p toolsys.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
		if len(got) == 3 {
			close(seen)
		}
	}}
	res, err := tool.Execute(t.Context(), json.RawMessage(`{}`), tc)
	if err != nil || res.IsError {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []toolsys.Progress{{Progress: 1, Total: 3, Message: "step 1"}, {Progress: 2, Total: 3, Message: "step 2"}, {Progress: 3, Total: 3, Message: "step 3"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress reports (-want +got):\n%s", diff)
	}
}
