package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/messages"
)

// waitNotReady asks /readyz until the server no longer says it is ready
// (503, or the connection refused once the listener is closed).
func waitNotReady(t *testing.T, e *env) {
	t.Helper()
	for {
		req, err := http.NewRequestWithContext(t.Context(), "GET", e.url+"/readyz", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if t.Context().Err() != nil {
			t.Fatal("the server stayed ready")
		}
		if err != nil {
			return
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			return
		}
	}
}

func TestShutdown_CompletesTurnInFlight(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript(), serve: true})
	e.createSession("s1")
	resp := e.send("POST", "/v1/sessions/s1/turns", `{"input":"block please"}`, "Accept", "text/event-stream")
	defer resp.Body.Close()
	sse := newSSEReader(resp.Body)
	sse.until(t, "tool_started")
	<-e.block.started

	e.shutdown = true
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- e.srv.Shutdown(ctx)
	}()
	waitNotReady(t, e)
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v with a turn in flight", err)
	default:
	}
	close(e.block.release)

	rest := sse.rest(t)
	if len(rest) == 0 || rest[len(rest)-1].Event != "turn_ended" {
		t.Fatalf("stream after shutdown began: %v", types(rest))
	}
	if ended := rest[len(rest)-1].event(t).(messages.TurnEnded); ended.Outcome != messages.OutcomeCompleted {
		t.Errorf("turn_ended = %+v", ended)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown = %v", err)
	}
	if err := e.srv.Shutdown(context.Background()); !errors.Is(err, httpapi.ErrServerClosed) {
		t.Errorf("second Shutdown = %v", err)
	}
}

func TestShutdown_CancelsTurnWhenContextEnds(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript(), serve: true})
	e.createSession("s1")
	resp := e.send("POST", "/v1/sessions/s1/turns", `{"input":"block please"}`, "Accept", "text/event-stream")
	defer resp.Body.Close()
	sse := newSSEReader(resp.Body)
	sse.until(t, "tool_started")
	<-e.block.started

	e.shutdown = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.srv.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown = %v, want context.Canceled", err)
	}
	rest := sse.rest(t)
	if len(rest) == 0 || rest[len(rest)-1].Event != "turn_ended" {
		t.Fatalf("stream after shutdown: %v", types(rest))
	}
	if ended := rest[len(rest)-1].event(t).(messages.TurnEnded); ended.Outcome != messages.OutcomeCancelled {
		t.Errorf("turn_ended = %+v", ended)
	}
}
