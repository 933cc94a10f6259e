package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors/cluster"
	"github.com/agcore/agcore/memory/jetstream"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
)

// serveMember is an `agcore serve --cluster` process.
type serveMember struct {
	node string
	cmd  *exec.Cmd
	addr string // remote address, from its "joined cluster" line
	api  string // base URL of its HTTP API
	done chan error
}

// sseEvent is one event of a stream: its type and its data.
type sseEvent struct {
	Type string
	Data json.RawMessage
}

// TestServeCluster runs two `agcore serve --cluster` processes over a
// journal on three NATS servers, with a token, and drives a session that
// member B owns through member A's HTTP API only: creating it, streaming a
// turn (text deltas and tool events arrive in order, ending with
// turn_ended), checking in the journal that the turn ran on B, and
// approving a write_file call pending on B (the file appears only after
// the approval). Then B is killed with SIGKILL: the next turn through A
// runs on A, and the session's history lost nothing.
func TestServeCluster(t *testing.T) {
	if raceEnabled {
		t.Skip("skipped under -race: protoactor's cluster code has data races of its own; .ci/run runs this test without it")
	}
	bin := buildBinary(t) // skips under -short
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c := natstest.RunCluster(ctx, t, 3, natstest.Options{})
	nc := natstest.Connect(t, c.URLs())
	// The streams and the bucket are created once, before the members.
	j, err := jetstream.New(ctx, jetstream.Config{Conn: nc, Streams: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jetstream.NewSessionMemory(ctx, jetstream.SessionMemoryConfig{Conn: nc}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	writeFile(t, filepath.Join(dir, "script.yaml"), `stateless: true
rules:
  - match: {role: tool}
    reply: {text: after the tool}
  - match: {role: user, contains: write}
    reply:
      tool_calls:
        - {name: write_file, arguments: {path: written.txt, content: approved}}
  - match: {role: user, contains: look}
    reply:
      text: "let me look. "
      tool_calls:
        - {name: read_file, arguments: {path: hello.txt}}
  - match: {any: true}
    reply: {text: answer from the cluster}
`)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "hello.txt"), "hello\n")
	cfgPath := filepath.Join(dir, "agcore.yaml")
	writeFile(t, cfgPath, fmt.Sprintf("default_model: mock/scripted\nworkspace: %s\nproviders:\n  - name: mock\n    type: scripted\n    script: %s\n",
		ws, filepath.Join(dir, "script.yaml")))
	const token = "cluster-test-token"

	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	health := []int{port(), port()}
	var seeds, seedAddrs []string
	for _, h := range health {
		seedAddrs = append(seedAddrs, "127.0.0.1:"+strconv.Itoa(h))
		seeds = append(seeds, "--seed", "127.0.0.1:"+strconv.Itoa(h))
	}
	var members []*serveMember
	for i, h := range health {
		m := &serveMember{node: fmt.Sprintf("m%d", i+1), done: make(chan error, 1)}
		args := append([]string{"--config", cfgPath, "serve", "--addr", "127.0.0.1:0", "--cluster", c.URLs(),
			"--member-addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(port())), "--health-port", strconv.Itoa(h),
			"--node", m.node, "--streams", "2", "--cluster-refresh", "200ms"}, seeds...)
		m.cmd = exec.Command(bin, args...)
		m.cmd.Dir = dir
		m.cmd.Env = append(userEnv(), "AGCORE_TOKEN="+token, "AGCORE_DATA_DIR="+filepath.Join(dir, "data-"+m.node))
		m.cmd.Stderr = os.Stderr
		out, err := m.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := m.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = m.cmd.Process.Kill()
			<-m.done
		})
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				select {
				case lines <- sc.Text():
				default:
				}
			}
			m.done <- m.cmd.Wait()
		}()
		for m.addr == "" || m.api == "" {
			select {
			case line := <-lines:
				if u, ok := strings.CutPrefix(line, "agcore API listening on "); ok {
					m.api = u
				}
				if rest, ok := strings.CutPrefix(line, "member "); ok && strings.Contains(line, "joined cluster") {
					m.addr, _, _ = strings.Cut(rest, " ")
					if !strings.Contains(line, "HTTP API announced as http://127.0.0.1:") {
						t.Errorf("joined line %q does not announce the HTTP API", line)
					}
				}
			case err := <-m.done:
				t.Fatalf("%s exited before serving: %v", m.node, err)
			case <-ctx.Done():
				t.Fatalf("%s did not serve: %v", m.node, ctx.Err())
			}
		}
		members = append(members, m)
	}
	a, b := members[0], members[1]

	// The test's own view of the cluster, to find a session B owns.
	client, err := cluster.Start(ctx, cluster.Config{Seeds: seedAddrs, Refresh: 200 * time.Millisecond, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Shutdown(context.Background()) })
	if err := client.WaitMembers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	id := ""
	for i := 0; id == ""; i++ {
		cand := fmt.Sprintf("web-%d", i)
		owner, err := client.Owner(cand)
		if err != nil {
			t.Fatal(err)
		}
		if owner == b.addr {
			id = cand
		}
	}

	api := &apiClient{t: t, base: a.api, token: token}
	if code, body := api.do(ctx, http.MethodPost, "/v1/sessions", `{"id":"`+id+`"}`); code != http.StatusCreated {
		t.Fatalf("create %s through %s: %d %s", id, a.node, code, body)
	}

	t.Run("stream through A, run on B", func(t *testing.T) {
		events := api.stream(ctx, "/v1/sessions/"+id+"/turns", `{"input":"look at hello","turn_id":"t-look"}`, nil)
		var kinds []string
		for _, ev := range events {
			kinds = append(kinds, ev.Type)
		}
		order := []string{"turn_started", "text_delta", "tool_started", "tool_finished", "text_delta", "turn_ended"}
		if got := compactTypes(kinds, order); !slices.Equal(got, order) {
			t.Errorf("events %v, want %v in this order", kinds, order)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != "turn_ended" {
			t.Errorf("the stream ends with %v, want turn_ended", kinds)
		}
		if nodes := activations(ctx, t, j, id); !slices.Equal(nodes, []string{b.node}) {
			t.Errorf("%s activated on %v, want on %s (B) only", id, nodes, b.node)
		}
	})

	t.Run("approval through A", func(t *testing.T) {
		written := filepath.Join(ws, "written.txt")
		events := api.stream(ctx, "/v1/sessions/"+id+"/turns", `{"input":"please write","turn_id":"t-write"}`,
			func(ev sseEvent) {
				if ev.Type != "approval_pending" {
					return
				}
				if _, err := os.Stat(written); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("written.txt exists before the approval: %v", err)
				}
				var p messages.ApprovalPending
				if err := json.Unmarshal(ev.Data, &p); err != nil {
					t.Fatal(err)
				}
				if code, body := api.do(ctx, http.MethodGet, "/v1/sessions/"+id+"/approvals", ""); code != http.StatusOK ||
					!strings.Contains(body, p.CallID) {
					t.Errorf("approvals through A: %d %s; want the pending call %s", code, body, p.CallID)
				}
				if code, body := api.do(ctx, http.MethodPost, "/v1/sessions/"+id+"/approvals/"+p.CallID, `{"allow":true}`); code != http.StatusOK {
					t.Errorf("approve through A: %d %s", code, body)
				}
			})
		if len(events) == 0 || events[len(events)-1].Type != "turn_ended" {
			t.Fatalf("the write turn's stream: %+v", events)
		}
		if b, err := os.ReadFile(written); err != nil || string(b) != "approved" {
			t.Errorf("written.txt after the approval: %q, %v", b, err)
		}
		if nodes := activations(ctx, t, j, id); !slices.Equal(nodes, []string{b.node}) {
			t.Errorf("%s activated on %v, want on %s (B) only", id, nodes, b.node)
		}
	})

	t.Run("B killed", func(t *testing.T) {
		if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		// A client retries a 503 after its Retry-After, with the same
		// turn id: the turn runs once, on A.
		var body string
		for attempt := 0; ; attempt++ {
			var code int
			var hdr http.Header
			code, body, hdr = api.doHeader(ctx, http.MethodPost, "/v1/sessions/"+id+"/turns", `{"input":"hello again","turn_id":"t-after"}`)
			if code == http.StatusOK {
				t.Logf("the turn through A completed %v after B was killed, on attempt %d", time.Since(killed).Round(time.Millisecond), attempt+1)
				break
			}
			t.Logf("attempt %d: %d %s", attempt+1, code, strings.TrimSpace(body))
			if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
				t.Fatalf("turn through A after B died: %d %s; want 200, or 503 with Retry-After", code, body)
			}
			wait, _ := strconv.Atoi(hdr.Get("Retry-After"))
			select {
			case <-time.After(time.Duration(wait) * time.Second):
			case <-ctx.Done():
				t.Fatalf("no turn through A after %d attempts: %v (last: %s)", attempt+1, ctx.Err(), body)
			}
		}
		if !strings.Contains(body, "answer from the cluster") {
			t.Errorf("turn after B died: %s", body)
		}
		if nodes := activations(ctx, t, j, id); !slices.Equal(nodes, []string{b.node, a.node}) {
			t.Errorf("%s activated on %v, want on %s then %s", id, nodes, b.node, a.node)
		}
		var users []string
		for e, err := range j.Read(ctx, id, 1) {
			if err != nil {
				t.Fatal(err)
			}
			if u, ok := e.Event.(messages.UserMessage); ok {
				users = append(users, u.TurnID)
			}
		}
		if want := []string{"t-look", "t-write", "t-after"}; !slices.Equal(users, want) {
			t.Errorf("journaled turns %v, want %v: each once, none lost", users, want)
		}
		code, hist := api.do(ctx, http.MethodGet, "/v1/sessions/"+id+"/history", "")
		if code != http.StatusOK || !strings.Contains(hist, "look at hello") || !strings.Contains(hist, "please write") ||
			!strings.Contains(hist, "hello again") {
			t.Errorf("history through A after B died: %d %s", code, hist)
		}
	})

	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.done:
		if err != nil {
			t.Errorf("%s after SIGTERM: %v", a.node, err)
		}
		a.done <- err // for the cleanup
	case <-ctx.Done():
		t.Fatalf("%s did not stop on SIGTERM: %v", a.node, ctx.Err())
	}
}

// activations returns the nodes of session id's Activated events, in
// journal order, each run of one node once.
func activations(ctx context.Context, t *testing.T, j *jetstream.Journal, id string) []string {
	t.Helper()
	var nodes []string
	for e, err := range j.Read(ctx, id, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if act, ok := e.Event.(messages.Activated); ok && (len(nodes) == 0 || nodes[len(nodes)-1] != act.Node) {
			nodes = append(nodes, act.Node)
		}
	}
	return nodes
}

// apiClient calls one member's HTTP API with the token.
type apiClient struct {
	t     *testing.T
	base  string
	token string
}

func (c *apiClient) request(ctx context.Context, method, path, body string) *http.Request {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

func (c *apiClient) do(ctx context.Context, method, path, body string) (int, string) {
	c.t.Helper()
	code, b, _ := c.doHeader(ctx, method, path, body)
	return code, b
}

func (c *apiClient) doHeader(ctx context.Context, method, path, body string) (int, string, http.Header) {
	c.t.Helper()
	resp, err := http.DefaultClient.Do(c.request(ctx, method, path, body))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// stream posts body to path asking for an event stream, calls each (when
// not nil) with every event as it arrives, and returns the events.
func (c *apiClient) stream(ctx context.Context, path, body string, each func(sseEvent)) []sseEvent {
	c.t.Helper()
	req := c.request(ctx, http.MethodPost, path, body)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("stream %s: %d %s", path, resp.StatusCode, b)
	}
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var env struct {
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &env); err == nil {
				cur.Data = env.Data
			}
		case line == "" && cur.Type != "":
			out = append(out, cur)
			if each != nil {
				each(cur)
			}
			cur = sseEvent{}
		}
	}
	if err := sc.Err(); err != nil {
		c.t.Fatalf("stream %s: %v after %d events", path, err, len(out))
	}
	return out
}
