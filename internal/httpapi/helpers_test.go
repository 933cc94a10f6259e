package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/builtin"
	"github.com/agcore/agcore/toolsys/mcp"
)

// blockTool blocks until its context ends or release is closed, and says
// when it has started.
type blockTool struct {
	started chan string   // receives the call id; buffered
	release chan struct{} // closing it lets every call return
}

func newBlockTool() *blockTool {
	return &blockTool{started: make(chan string, 8), release: make(chan struct{})}
}

func (b *blockTool) Name() string        { return "block" }
func (b *blockTool) Description() string { return "waits until released or cancelled" }
func (b *blockTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (b *blockTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (b *blockTool) SecretParams() []string         { return nil }
func (b *blockTool) Idempotent() bool               { return false }
func (b *blockTool) Execute(ctx context.Context, args json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	var p struct {
		Report string `json:"report"` // reported as progress 1 of 2, when set
	}
	_ = json.Unmarshal(args, &p)
	if p.Report != "" {
		tc.ReportProgress(toolsys.Progress{Progress: 1, Total: 2, Message: p.Report})
	}
	b.started <- tc.CallID
	select {
	case <-b.release:
		return toolsys.Result{Content: "released"}, nil
	case <-ctx.Done():
		return toolsys.Result{}, ctx.Err()
	}
}

// env is a server over a runtime on the scripted model, with the built-in
// file tools and the block tool in a temporary workspace.
type env struct {
	t         testing.TB
	srv       *httpapi.Server
	url       string
	token     string
	workspace string
	block     *blockTool
	journal   *memory.BadgerJournal
	store     *memory.Store
	rt        *actors.Runtime
	shutdown  bool
}

type envOptions struct {
	script scripted.Script
	// mode is the permission mode; zero is ModeAsk (write tools need
	// approval).
	mode toolsys.Mode
	// approvalTimeout is the permission pipeline's; zero is its default.
	approvalTimeout time.Duration
	token           string
	// maxBody is Config.MaxBodyBytes.
	maxBody int64
	// serve, when set, serves a loopback listener with Server.Serve
	// instead of httptest.
	serve bool
	// store and journal reuse those of an earlier env.
	from *env
	// config, when set, adjusts the server's Config before New.
	config func(*httpapi.Config)
	// wrap, when set, wraps the loopback listener of serve.
	wrap func(net.Listener) net.Listener
	// mcp are the runtime's MCP servers.
	mcp []mcp.ServerConfig
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{t: t, token: o.token, block: newBlockTool()}
	if o.from != nil {
		e.store, e.journal, e.workspace = o.from.store, o.from.journal, o.from.workspace
	} else {
		var err error
		if e.store, err = memory.Open(memory.Options{InMemory: true}); err != nil {
			t.Fatal(err)
		}
		if e.journal, err = memory.NewJournal(e.store, memory.JournalOptions{Durability: memory.DurabilityNone}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = e.journal.Close()
			_ = e.store.Close()
		})
		e.workspace = t.TempDir()
		if err := os.WriteFile(filepath.Join(e.workspace, "README.md"), []byte("# greeter\nSays hello.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := toolsys.NewWorkspace(e.workspace)
	if err != nil {
		t.Fatal(err)
	}
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: o.mode, ApprovalTimeout: o.approvalTimeout})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
	bo := builtin.Options{}
	reg.MustRegister(toolsys.Bridge[builtin.ListDirParams](builtin.NewListDir(bo)))
	reg.MustRegister(toolsys.Bridge[builtin.ReadFileParams](builtin.NewReadFile(bo)))
	reg.MustRegister(toolsys.Bridge[builtin.WriteFileParams](builtin.NewWriteFile(bo)))
	reg.MustRegister(e.block)

	prov, err := scripted.New(o.script, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	rt, err := actors.New(actors.Config{
		Journal: e.journal, SessionMemory: memory.NewSessionMemory(e.store, memory.SessionMemoryOptions{}),
		Provider: prov, Model: "scripted", Tools: reg, Workspace: ws, Approver: actors.ManualApprover(),
		MeterProvider: mp, MCPServers: o.mcp,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.rt = rt
	cfg := httpapi.Config{
		Runtime: rt, Tools: reg, MetricsReader: reader,
		Token: o.token, MaxBodyBytes: o.maxBody,
	}
	if o.config != nil {
		o.config(&cfg)
	}
	e.srv, err = httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if o.serve {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		e.url = "http://" + ln.Addr().String()
		if o.wrap != nil {
			ln = o.wrap(ln)
		}
		go func() { served <- e.srv.Serve(ln) }()
		t.Cleanup(func() {
			e.close()
			if err := <-served; !errors.Is(err, httpapi.ErrServerClosed) {
				t.Errorf("Serve = %v, want ErrServerClosed", err)
			}
		})
	} else {
		ts := httptest.NewServer(e.srv)
		e.url = ts.URL
		t.Cleanup(func() {
			e.close()
			ts.Close()
		})
	}
	return e
}

// close shuts the server down, once.
func (e *env) close() {
	if e.shutdown {
		return
	}
	e.shutdown = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		e.t.Errorf("Shutdown: %v", err)
	}
}

// do sends a request and returns the response with its body read.
func (e *env) do(method, path, body string, header ...string) (*http.Response, []byte) {
	e.t.Helper()
	resp := e.send(method, path, body, header...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp, b
}

// send sends a request; the caller closes the body. header alternates
// names and values; an empty value removes the header, and "Host" sets the
// Host header. The env's token is sent unless an Authorization header is
// given, and a body is sent as application/json unless a Content-Type
// header is given.
func (e *env) send(method, path, body string, header ...string) *http.Response {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		switch name, value := header[i], header[i+1]; {
		case strings.EqualFold(name, "Host"):
			req.Host = value
		case value == "":
			req.Header.Del(name)
		default:
			req.Header.Set(name, value)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// createSession creates session id.
func (e *env) createSession(id string) {
	e.t.Helper()
	resp, body := e.do("POST", "/v1/sessions", fmt.Sprintf(`{"id":%q}`, id))
	if resp.StatusCode != http.StatusCreated {
		e.t.Fatalf("create %s: %d %s", id, resp.StatusCode, body)
	}
}

// decode unmarshals body into a new T.
func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return v
}

// frame is one Server-Sent Event.
type frame struct {
	ID, Event, Data string
}

// sseReader parses a text/event-stream: frames are separated by a blank
// line; "id", "event" and "data" fields are kept (data lines joined by
// newlines), comment lines are counted.
type sseReader struct {
	sc       *bufio.Scanner
	comments int
}

func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	return &sseReader{sc: sc}
}

// next returns the next frame, or io.EOF at the end of the stream.
func (s *sseReader) next() (frame, error) {
	var f frame
	var data []string
	seen := false
	for s.sc.Scan() {
		line := s.sc.Text()
		if line == "" {
			if !seen {
				continue
			}
			f.Data = strings.Join(data, "\n")
			return f, nil
		}
		if strings.HasPrefix(line, ":") {
			s.comments++
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		seen = true
		switch name {
		case "id":
			f.ID = value
		case "event":
			f.Event = value
		case "data":
			data = append(data, value)
		}
	}
	if err := s.sc.Err(); err != nil {
		return frame{}, err
	}
	if seen {
		return frame{}, fmt.Errorf("stream ended inside a frame: %+v", f)
	}
	return frame{}, io.EOF
}

// event decodes a frame's runtime event.
func (f frame) event(t *testing.T) messages.Event {
	t.Helper()
	ev, err := messages.UnmarshalEvent([]byte(f.Data))
	if err != nil {
		t.Fatalf("frame %s: %v", f.Event, err)
	}
	if ev.EventType() != f.Event {
		t.Fatalf("frame event %q carries a %q event", f.Event, ev.EventType())
	}
	return ev
}

// until reads frames until one of type typ, and returns the frames read.
func (s *sseReader) until(t *testing.T, typ string) []frame {
	t.Helper()
	var out []frame
	for {
		f, err := s.next()
		if err != nil {
			t.Fatalf("waiting for %s after %v: %v", typ, types(out), err)
		}
		out = append(out, f)
		if f.Event == typ {
			return out
		}
	}
}

// rest reads the frames up to the end of the stream.
func (s *sseReader) rest(t *testing.T) []frame {
	t.Helper()
	var out []frame
	for {
		f, err := s.next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("after %v: %v", types(out), err)
		}
		out = append(out, f)
	}
}

// skipComments reads the stream until n more comment lines (heartbeats)
// have arrived; frames read meanwhile are dropped.
func (s *sseReader) skipComments(t *testing.T, n int) {
	t.Helper()
	want := s.comments + n
	for s.comments < want && s.sc.Scan() {
		if strings.HasPrefix(s.sc.Text(), ":") {
			s.comments++
		}
	}
	if s.comments < want {
		t.Fatalf("the stream ended after %d of %d heartbeats: %v", n-(want-s.comments), n, s.sc.Err())
	}
}

func types(fs []frame) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Event
	}
	return out
}

// errorBody checks that body is an API error with the given code.
func errorBody(t *testing.T, body []byte) httpapi.Error {
	t.Helper()
	var eb struct {
		Error *httpapi.Error `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&eb); err != nil || eb.Error == nil || eb.Error.Code == "" || eb.Error.Message == "" {
		t.Fatalf("not an error body (%v): %s", err, body)
	}
	return *eb.Error
}
