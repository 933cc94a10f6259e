package jetstream

import (
	"errors"
	"strings"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream/natstest"
)

func TestConfigErrors(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	nc := natstest.Connect(t, srv.URL())
	for _, tc := range []struct {
		name  string
		cfg   Config
		field string
	}{
		{"no conn", Config{}, "Conn"},
		{"stream name", Config{Conn: nc, Stream: "a.b"}, "Stream"},
		{"subject", Config{Conn: nc, Subject: "a.*"}, "Subject"},
		{"streams", Config{Conn: nc, Streams: -1}, "Streams"},
		{"replicas", Config{Conn: nc, Replicas: 7}, "Replicas"},
		{"durability", Config{Conn: nc, Options: memory.JournalOptions{Durability: 9}}, "Durability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(t.Context(), tc.cfg)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("New error = %v, want ErrConfig naming %s", err, tc.field)
			}
		})
	}
}

// TestNewRefusesAnotherLayout opens streams made for another number of
// streams or another storage: New fails naming the field, since sessions
// would be looked for in the wrong stream or kept with another durability.
func TestNewRefusesAnotherLayout(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	first := newJournal(t, srv.URL(), Config{Streams: 2})
	if _, err := first.Append(t.Context(), "s", 0, 0, userText("x")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{Streams: 3}, "Streams"},
		{Config{Streams: 2, Options: memory.JournalOptions{Durability: memory.DurabilityNone}}, "Durability"},
	} {
		tc.cfg.Conn = natstest.Connect(t, srv.URL())
		_, err := New(t.Context(), tc.cfg)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("New(%+v) error = %v, want ErrConfig naming %s", tc.cfg, err, tc.field)
		}
	}
	// A single entry cannot be deleted from a journal stream.
	st := first.stream("s")
	if err := st.DeleteMsg(t.Context(), 1); err == nil {
		t.Errorf("deleting a record of stream %s succeeded, want it refused", st.CachedInfo().Config.Name)
	}
	if tail, err := first.Tail(t.Context(), "s"); err != nil || tail != 1 {
		t.Errorf("Tail = %d, %v; want 1", tail, err)
	}
}
