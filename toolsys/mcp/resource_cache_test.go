package mcp_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys/mcp"
)

// TestClient_ResourceSubscriptions reads a resource from a server that
// offers subscriptions and from one that does not. With subscriptions the
// Client subscribes, answers a second read without asking the server, and
// asks again once the server says the resource was updated; without them
// every read reaches the server.
func TestClient_ResourceSubscriptions(t *testing.T) {
	const uri = "file:///notes.md"
	tests := []struct {
		name      string
		subscribe bool
		// wantReads is the server's count of reads after each of the three
		// reads (the update comes between the second and the third).
		wantReads [3]int64
		wantSubs  int64
	}{
		{"with subscriptions", true, [3]int64{1, 1, 2}, 1},
		{"without subscriptions", false, [3]int64{1, 2, 3}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reads, subs atomic.Int64
			opts := &sdk.ServerOptions{}
			if tt.subscribe {
				opts.SubscribeHandler = func(context.Context, *sdk.SubscribeRequest) error { subs.Add(1); return nil }
				opts.UnsubscribeHandler = func(context.Context, *sdk.UnsubscribeRequest) error { return nil }
			}
			srv := newInMemoryWith(t, opts, func(s *sdk.Server) {
				s.AddResource(&sdk.Resource{URI: uri, Name: "notes", MIMEType: "text/markdown"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
					n := reads.Add(1)
					return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, Text: fmt.Sprint("version ", n)}}}, nil
				})
			})
			logs := syncBuffer{wait: "mcp: the server updated a resource", seen: make(chan struct{})}
			// Subscribing sends subscriptions/listen without waiting for it
			// (SEP-2575): the server has the subscription once it
			// acknowledges it, which the client's transport shows.
			acked := &messageWatch{all: [][]byte{[]byte(`"notifications/subscriptions/acknowledged"`), []byte(uri)}, seen: make(chan struct{})}
			cfg := srv.config("docs")
			cfg.Transport = func(ctx context.Context) (sdk.Transport, error) {
				tr, err := srv.transport(ctx)
				if err != nil {
					return nil, err
				}
				return &sdk.LoggingTransport{Transport: tr, Writer: acked}, nil
			}
			c, err := mcp.Connect(t.Context(), cfg, mcp.Options{Logger: zerolog.New(&logs)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })

			read := func(step int, want string) {
				t.Helper()
				res, err := c.ReadResource(t.Context(), uri)
				if err != nil {
					t.Fatalf("read %d: %v", step+1, err)
				}
				if got := res.Contents[0].Text; got != want {
					t.Errorf("read %d = %q, want %q", step+1, got, want)
				}
				if got := reads.Load(); got != tt.wantReads[step] {
					t.Errorf("after read %d the server served %d reads, want %d", step+1, got, tt.wantReads[step])
				}
				res.Contents[0].Text = "changed by the caller" // must not reach the next reader
			}
			read(0, "version 1")
			read(1, fmt.Sprint("version ", tt.wantReads[1]))
			if t.Failed() {
				return // the update below would never be logged
			}
			if tt.subscribe {
				<-acked.seen
				if err := srv.server.ResourceUpdated(t.Context(), &sdk.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
					t.Fatal(err)
				}
				<-logs.seen
			}
			read(2, fmt.Sprint("version ", tt.wantReads[2]))
			if got := subs.Load(); got != tt.wantSubs {
				t.Errorf("subscriptions = %d, want %d", got, tt.wantSubs)
			}
		})
	}
}

// messageWatch closes seen once a write holds every one of all.
type messageWatch struct {
	mu   sync.Mutex
	all  [][]byte
	seen chan struct{}
}

func (w *messageWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.all == nil {
		return len(p), nil
	}
	for _, b := range w.all {
		if !bytes.Contains(p, b) {
			return len(p), nil
		}
	}
	w.all = nil
	close(w.seen)
	return len(p), nil
}
