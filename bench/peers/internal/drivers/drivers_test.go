// Package drivers_test runs every peer's driver against the workload's
// mock model, in process, so that a peer that breaks the workload is found
// by go test rather than by a benchmark run.
package drivers_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agcore/agcore/bench/peers/internal/drivers/agcoreloop"
	"github.com/agcore/agcore/bench/peers/internal/drivers/agcoreruntime"
	"github.com/agcore/agcore/bench/peers/internal/drivers/bare"
	"github.com/agcore/agcore/bench/peers/internal/drivers/einoadk"
	"github.com/agcore/agcore/bench/peers/internal/drivers/einoreact"
	"github.com/agcore/agcore/bench/peers/internal/drivers/langchaingo"
	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/scripted"
)

var peers = []harness.Peer{
	bare.Peer, bare.StreamPeer, agcoreloop.Peer, agcoreruntime.Peer, agcoreruntime.ReusePeer, agcoreruntime.DiskPeer,
	einoreact.Peer, einoadk.Peer, langchaingo.Peer,
}

// startMock serves script and returns the API's base URL.
func startMock(t *testing.T, script scripted.Script) string {
	t.Helper()
	model, err := scripted.New(script, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mockllm.Start(t.Context(), "127.0.0.1:0", mockllm.Config{Provider: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv.URL()
}

func newDriver(t *testing.T, p harness.Peer, url string, concurrency int) harness.Driver {
	t.Helper()
	d, err := p.New(t.Context(), harness.Env{BaseURL: url, HTTPClient: workload.HTTPClient(concurrency)})
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("%s: close: %v", p.Name, err)
		}
	})
	return d
}

func TestPeersRunTheWorkload(t *testing.T) {
	url := startMock(t, workload.Script())
	for _, p := range peers {
		t.Run(p.Name, func(t *testing.T) {
			d := newDriver(t, p, url, 4)
			res, err := harness.Run(t.Context(), p.Name, d, harness.Options{Turns: 20, Concurrency: 4, Warmup: 2})
			if err != nil {
				t.Fatal(err)
			}
			if res.Peer != p.Name || res.Turns != 20 || res.AllocsPerTurn <= 0 {
				t.Errorf("result %+v", res)
			}
		})
	}
}

// TestPeersFailWrongTurns checks that every peer reports a turn whose
// answer does not quote the tool result as a failure.
func TestPeersFailWrongTurns(t *testing.T) {
	script := workload.Script()
	script.Rules[0].Reply.Text = "I could not find it."
	url := startMock(t, script)
	for _, p := range peers {
		t.Run(p.Name, func(t *testing.T) {
			d := newDriver(t, p, url, 1)
			if err := d.Turn(t.Context()); !errors.Is(err, workload.ErrWrongAnswer) {
				t.Errorf("Turn = %v, want ErrWrongAnswer", err)
			}
		})
	}
}

// TestScriptChecksTheToolResult checks that the mock answers only a tool
// message holding the expected result, and fails any other.
func TestScriptChecksTheToolResult(t *testing.T) {
	model, err := scripted.New(workload.Script(), scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	call := messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{
		{ID: "c1", Name: workload.ToolName, Arguments: workload.Arguments},
	}}
	tests := []struct {
		name     string
		msgs     []messages.Message
		wantText string
		wantCall bool
		wantFail bool
	}{
		{"question", []messages.Message{messages.UserText(workload.Prompt)}, "", true, false},
		{"right result", []messages.Message{messages.UserText(workload.Prompt), call,
			messages.ToolResultMessage("c1", workload.Result())}, workload.Answer(), false, false},
		{"wrong result", []messages.Message{messages.UserText(workload.Prompt), call,
			messages.ToolResultMessage("c1", workload.Lookup("beta"))}, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := model.Chat(context.Background(), messages.Request{Messages: tt.msgs})
			if tt.wantFail {
				var pe *providers.Error
				if !errors.As(err, &pe) || pe.Kind != providers.KindBadRequest {
					t.Fatalf("Chat error = %v, want a bad-request *providers.Error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Message.Text(); got != tt.wantText {
				t.Errorf("text = %q, want %q", got, tt.wantText)
			}
			if got := len(resp.Message.ToolCalls) == 1; got != tt.wantCall {
				t.Errorf("tool calls = %+v, want a call: %v", resp.Message.ToolCalls, tt.wantCall)
			}
		})
	}
}
