package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// waitFor waits on c's status changes until cond holds.
func waitFor(t *testing.T, c *mcp.Conn, what string, cond func(mcp.Status) bool) mcp.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		ch := c.Changed()
		if st := c.Status(); cond(st) {
			return st
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: status %+v", what, c.Status())
		}
	}
}

// instantSleep records the delays asked for and does not wait.
type instantSleep struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *instantSleep) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func TestBackoff_Delay(t *testing.T) {
	tests := []struct {
		name string
		b    mcp.Backoff
		n    int
		rnd  float64
		want time.Duration
	}{
		{"first", mcp.Backoff{}, 1, 0, 500 * time.Millisecond},
		{"zero n is first", mcp.Backoff{}, 0, 0, 500 * time.Millisecond},
		{"doubles", mcp.Backoff{}, 3, 0, 2 * time.Second},
		{"capped", mcp.Backoff{}, 20, 0, 30 * time.Second},
		{"jitter", mcp.Backoff{}, 1, 0.5, 550 * time.Millisecond},
		{"no jitter", mcp.Backoff{Jitter: -1}, 1, 0.99, 500 * time.Millisecond},
		{"custom", mcp.Backoff{Initial: time.Millisecond, Max: 3 * time.Millisecond}, 5, 0, 3 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.b.Delay(tt.n, func() float64 { return tt.rnd }); got != tt.want {
				t.Errorf("Delay(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
}

func TestToolName(t *testing.T) {
	long := strings.Repeat("a", 80)
	tests := []struct{ server, tool, want string }{
		{"fs", "read_file", "mcp__fs__read_file"},
		{"fs", "get-sum", "mcp__fs__get-sum"},
		{"fs", "a.b", "mcp__fs__a_b_" + mustHashSuffix("a.b")},
		{"fs", "", "mcp__fs___" + mustHashSuffix("")},
	}
	for _, tt := range tests {
		if got := mcp.ToolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
	if got := mcp.ToolName("fs", long); len(got) != 64 || !strings.HasPrefix(got, "mcp__fs__aaa") {
		t.Errorf("ToolName of a long name = %q (%d chars), want 64 chars", got, len(got))
	}
	if mcp.ToolName("fs", long) == mcp.ToolName("fs", long+"b") {
		t.Error("two long names that differ after the cut collide")
	}
	if mcp.ToolName("fs", "a.b") == mcp.ToolName("fs", "a_b") {
		t.Error("a sanitised name collides with a clean one")
	}
}

// mustHashSuffix is the 8-hex-digit suffix ToolName derives from a name
// (FNV-1a 32).
func mustHashSuffix(s string) string {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	const hexdigits = "0123456789abcdef"
	out := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		out[i] = hexdigits[h&0xf]
		h >>= 4
	}
	return string(out)
}

func TestConn_ReconnectsAfterServerDies(t *testing.T) {
	var calls atomic.Int64
	m := newInMemory(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "echo", InputSchema: echoSchema}, echoHandler(&calls))
	})
	sl := &instantSleep{}
	conn, err := mcp.NewConn(m.config("mem"), mcp.ConnOptions{Sleep: sl.sleep, Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	reg := runAllRegistry(t)
	conn.Bind(reg)
	conn.Start(t.Context())
	defer conn.Close()
	if err := conn.Ready(t.Context()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	call := func() (toolsys.Result, error) {
		return reg.Call(t.Context(), "mcp__mem__echo", json.RawMessage(`{"message":"hi"}`), nil)
	}
	if res, err := call(); err != nil || res.Content != "echo: hi" {
		t.Fatalf("first call = %+v, %v", res, err)
	}
	first := conn.Status().Connects
	m.kill()
	waitFor(t, conn, "reconnection", func(s mcp.Status) bool { return s.Connects > first && s.State == mcp.StateReady })
	if res, err := call(); err != nil || res.Content != "echo: hi" {
		t.Fatalf("call after reconnection = %+v, %v", res, err)
	}
	if diff := cmp.Diff([]time.Duration{500 * time.Millisecond}, sl.delays); diff != "" {
		t.Errorf("backoff delays (-want +got):\n%s", diff)
	}
	if _, ok := reg.Get("mcp__mem__echo"); !ok {
		t.Error("the tool is no longer registered")
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Get("mcp__mem__echo"); ok {
		t.Error("Close left the tool registered")
	}
	_, err = conn.CallTool(t.Context(), "echo", nil)
	if !errors.Is(err, mcp.ErrClosed) {
		t.Errorf("call after Close = %v, want ErrClosed", err)
	}
}

func TestConn_GivesUp(t *testing.T) {
	attempts := 0
	cfg := mcp.ServerConfig{Name: "never", Transport: func(context.Context) (sdk.Transport, error) {
		attempts++
		return nil, errors.New("connection refused by test")
	}}
	sl := &instantSleep{}
	var (
		mu     sync.Mutex
		states []mcp.State
	)
	conn, err := mcp.NewConn(cfg, mcp.ConnOptions{
		Sleep: sl.sleep, Rand: func() float64 { return 0 }, MaxFailures: 4,
		OnState: func(s mcp.Status) {
			mu.Lock()
			defer mu.Unlock()
			states = append(states, s.State)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	conn.Start(t.Context())
	defer conn.Close()
	err = conn.Ready(t.Context())
	if !errors.Is(err, mcp.ErrGaveUp) || !errors.Is(err, mcp.ErrServerUnavailable) || !strings.Contains(err.Error(), "connection refused by test") {
		t.Fatalf("Ready = %v, want ErrGaveUp with the cause", err)
	}
	if attempts != 4 {
		t.Errorf("attempts = %d, want 4", attempts)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}
	if diff := cmp.Diff(want, sl.delays); diff != "" {
		t.Errorf("backoff delays (-want +got):\n%s", diff)
	}
	if st := conn.Status(); st.State != mcp.StateFailed || st.Failures != 3 {
		t.Errorf("status = %+v, want failed", st)
	}
	if _, err := conn.CallTool(t.Context(), "x", nil); !errors.Is(err, mcp.ErrGaveUp) {
		t.Errorf("call on a failed Conn = %v, want ErrGaveUp", err)
	}
	conn.Close() // waits for the supervision loop, and so for OnState
	mu.Lock()
	defer mu.Unlock()
	want2 := []mcp.State{mcp.StateConnecting, mcp.StateBackoff, mcp.StateConnecting, mcp.StateBackoff,
		mcp.StateConnecting, mcp.StateBackoff, mcp.StateConnecting, mcp.StateFailed}
	if diff := cmp.Diff(want2, states); diff != "" {
		t.Errorf("states reported (-want +got):\n%s", diff)
	}
}

func TestConn_ToolListChanged(t *testing.T) {
	var calls atomic.Int64
	m := newInMemory(t, func(s *sdk.Server) {
		s.AddTool(&sdk.Tool{Name: "echo", InputSchema: echoSchema}, echoHandler(&calls))
		s.AddTool(&sdk.Tool{Name: "old", InputSchema: echoSchema}, echoHandler(&calls))
	})
	conn, err := mcp.NewConn(m.config("mem"), mcp.ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reg := runAllRegistry(t)
	conn.Start(t.Context())
	defer conn.Close()
	if err := conn.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	conn.Bind(reg)
	if diff := cmp.Diff([]string{"mcp__mem__echo", "mcp__mem__old"}, reg.Names()); diff != "" {
		t.Fatalf("names after Bind (-want +got):\n%s", diff)
	}
	echo, _ := reg.Get("mcp__mem__echo")
	m.server.AddTool(&sdk.Tool{Name: "added", InputSchema: echoSchema}, echoHandler(&calls))
	m.server.RemoveTools("old")
	waitFor(t, conn, "the new tool list", func(mcp.Status) bool {
		_, added := reg.Get("mcp__mem__added")
		_, old := reg.Get("mcp__mem__old")
		return added && !old
	})
	if got, _ := reg.Get("mcp__mem__echo"); got != echo {
		t.Error("an unchanged tool was replaced")
	}
	res, err := reg.Call(t.Context(), "mcp__mem__added", json.RawMessage(`{"message":"new"}`), nil)
	if err != nil || res.Content != "echo: new" {
		t.Errorf("call of the added tool = %+v, %v", res, err)
	}
}
