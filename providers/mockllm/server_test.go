package mockllm_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/scripted"
)

func TestStart(t *testing.T) {
	p := scripted.MustNew(scripted.Demo(), scripted.Options{})
	srv, err := mockllm.Start(t.Context(), "127.0.0.1:0", mockllm.Config{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") || !strings.HasSuffix(srv.URL(), "/v1") || strings.HasSuffix(srv.Addr(), ":0") {
		t.Errorf("URL() = %q, Addr() = %q", srv.URL(), srv.Addr())
	}
	client := &http.Client{}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/chat/completions",
		strings.NewReader(`{"model":"scripted","messages":[{"role":"user","content":"go"}]}`))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"name":"list_dir"`) {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := client.Get(srv.URL() + "/models"); err == nil {
		t.Error("the server still answers after Close")
	}
}

func TestStart_ContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	srv, err := mockllm.Start(ctx, "127.0.0.1:0", mockllm.Config{Provider: scripted.MustNew(scripted.Demo(), scripted.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := srv.Close(); err != nil { // waits for the shutdown the context started
		t.Errorf("Close: %v", err)
	}
	if _, err := http.Get(srv.URL() + "/models"); err == nil {
		t.Error("the server still answers after its context ended")
	}
}

func TestStart_Refuses(t *testing.T) {
	p := scripted.MustNew(scripted.Demo(), scripted.Options{})
	tests := []struct {
		addr string
		cfg  mockllm.Config
		is   error
		msg  string
	}{
		{addr: ":0", cfg: mockllm.Config{Provider: p}, is: mockllm.ErrNonLoopback},
		{addr: "0.0.0.0:0", cfg: mockllm.Config{Provider: p}, is: mockllm.ErrNonLoopback},
		{addr: "example.com:80", cfg: mockllm.Config{Provider: p}, is: mockllm.ErrNonLoopback},
		{addr: "127.0.0.1", cfg: mockllm.Config{Provider: p}, msg: "missing port"},
		{addr: "127.0.0.1:0", cfg: mockllm.Config{}, msg: "Provider is required"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			srv, err := mockllm.Start(t.Context(), tt.addr, tt.cfg)
			if err == nil {
				srv.Close()
				t.Fatal("Start succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %v containing %q", err, tt.is, tt.msg)
			}
		})
	}
}

func TestStart_Localhost(t *testing.T) {
	for _, addr := range []string{"localhost:0", "[::1]:0"} {
		srv, err := mockllm.Start(t.Context(), addr, mockllm.Config{Provider: scripted.MustNew(scripted.Demo(), scripted.Options{})})
		if err != nil {
			if strings.Contains(err.Error(), "listen") { // no IPv6 on this machine
				t.Logf("%s: %v", addr, err)
				continue
			}
			t.Fatalf("%s: %v", addr, err)
		}
		if err := srv.Close(); err != nil {
			t.Errorf("%s: Close: %v", addr, err)
		}
	}
}

func TestServer_CloseDropsUnusedConnections(t *testing.T) {
	srv, err := mockllm.Start(t.Context(), "127.0.0.1:0", mockllm.Config{
		Provider:        scripted.MustNew(scripted.Demo(), scripted.Options{}),
		ShutdownTimeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	conn, err := d.DialContext(t.Context(), "tcp", srv.Addr()) // a client's spare connection, never used
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := srv.Close(); err != nil {
		t.Errorf("Close with an unused connection open: %v", err)
	}
}

func TestServer_CloseCutsStuckStreams(t *testing.T) {
	srv, err := mockllm.Start(t.Context(), "127.0.0.1:0", mockllm.Config{
		Provider: scripted.MustNew(scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true},
			Reply: scripted.Reply{Text: "first chunk, then silence", ChunkDelay: time.Hour}}}}, scripted.Options{}),
		ShutdownTimeout: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line %q, %v", line, err)
	}
	if err := srv.Close(); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want the shutdown deadline reported", err)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the stuck stream was not cut")
	}
}
