package cluster_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/actors/cluster"
)

// TestRequest_RetriesOnlyIdempotent reaches for a session in a cluster
// whose only member is gone: Status, which only reads, is attempted again
// and again until its context ends, each attempt bounded; Cancel, which a
// second copy could repeat on a later turn, is attempted once and reports
// that its outcome is unknown.
func TestRequest_RetriesOnlyIdempotent(t *testing.T) {
	var logs syncBuffer
	m, err := cluster.Start(t.Context(), cluster.Config{
		Seeds: []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))}, Refresh: 50 * time.Millisecond, Attempt: 100 * time.Millisecond,
		Logger: zerolog.New(&logs).Level(zerolog.DebugLevel),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := m.Shutdown(context.Background()); !errors.Is(err, cluster.ErrClosed) {
			t.Errorf("second Shutdown: %v, want ErrClosed", err)
		}
	})

	attempts := func() int { return strings.Count(logs.String(), `"message":"cluster: attempt without answer"`) }

	ctx, cancel := context.WithTimeout(t.Context(), 600*time.Millisecond)
	defer cancel()
	if _, err := m.Status(ctx, "s1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Status: error %v, want the context's deadline", err)
	}
	if n := attempts(); n < 2 {
		t.Errorf("Status was attempted %d times, want it retried", n)
	}

	before := attempts()
	if _, err := m.Cancel(t.Context(), "s1"); !errors.Is(err, cluster.ErrOutcomeUnknown) {
		t.Errorf("Cancel: error %v, want ErrOutcomeUnknown", err)
	}
	if n := attempts() - before; n != 1 {
		t.Errorf("Cancel was attempted %d times, want once", n)
	}
}

// TestStart_Config refuses configurations that cannot work, naming the
// field.
func TestStart_Config(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   cluster.Config
		field string
	}{
		{"no seeds", cluster.Config{}, "Seeds"},
		{"bad seed", cluster.Config{Seeds: []string{"nohost"}}, "Seeds"},
		{"attempt over protoactor's 5 s", cluster.Config{Seeds: []string{"127.0.0.1:1"}, Attempt: 5 * time.Second}, "Attempt"},
		{"negative refresh", cluster.Config{Seeds: []string{"127.0.0.1:1"}, Refresh: -1}, "Refresh"},
		{"unspecified host", cluster.Config{Seeds: []string{"127.0.0.1:1"}, Host: "0.0.0.0"}, "Host"},
		{"member without ports", cluster.Config{Seeds: []string{"127.0.0.1:1"}, Runtime: &actors.Runtime{}}, "Port"},
		{"member not among the seeds", cluster.Config{Seeds: []string{"127.0.0.1:1"}, Runtime: &actors.Runtime{}, Port: 2, HealthPort: 3}, "Seeds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cluster.Start(t.Context(), tc.cfg)
			if !errors.Is(err, cluster.ErrConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("Start: error %v, want ErrConfig naming %s", err, tc.field)
			}
		})
	}
}
