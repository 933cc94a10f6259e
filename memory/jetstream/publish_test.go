package jetstream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
)

// resendRecord publishes a record with a fixed Nats-Msg-Id on an empty
// session, then the same record again, as after an attempt whose answer
// was lost, and returns both answers and the stream's message count.
func resendRecord(t *testing.T, j *Journal) (first, again uint64, againErr error, msgs uint64) {
	t.Helper()
	ctx := t.Context()
	env, err := messages.NewEnvelope(1, time.Now(), userText("once"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := env.EncodeTrusted()
	if err != nil {
		t.Fatal(err)
	}
	record := func(id string) *nats.Msg {
		m := encodeRecord(j.entrySubject("s"), 1, 0, [][]byte{b})
		m.Header.Set(njs.MsgIDHeader, id)
		return m
	}
	if first, _, err = j.publish(ctx, record("the-same-id"), 0); err != nil {
		t.Fatal(err)
	}
	again, _, againErr = j.publish(ctx, record("the-same-id"), 0)
	if _, _, err := j.publish(ctx, record("another-id"), 0); !errors.Is(err, errWrongLast) {
		t.Errorf("another record on the same expected sequence: error = %v, want errWrongLast", err)
	}
	info, err := j.stream("s").Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return first, again, againErr, info.State.Msgs
}

// TestResendR1 resends a stored record on a one-server stream: its leader
// checks the expected sequence before the Nats-Msg-Id, so the resend is
// refused, nothing is stored twice, and the session's last record carries
// the resent id, which is how Append recognises its own record (settle).
func TestResendR1(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	j := newJournal(t, srv.URL(), Config{})
	_, _, err, msgs := resendRecord(t, j)
	if !errors.Is(err, errWrongLast) {
		t.Errorf("resend: error = %v, want errWrongLast", err)
	}
	if msgs != 1 {
		t.Errorf("stream holds %d records, want 1", msgs)
	}
	h, herr := j.fetchHead(t.Context(), "s")
	if herr != nil || h.msgID != "the-same-id" {
		t.Errorf("last record's id = %q, %v; want the resent one", h.msgID, herr)
	}
	if last, err := settle(h, errWrongLast, true, "the-same-id"); err != nil || last != 1 {
		t.Errorf("settle of the resent append = %d, %v; want stored at 1", last, err)
	}
}

func TestSettle(t *testing.T) {
	conflict := fmt.Errorf("%w: expected tail 3, tail is 4", memory.ErrConflict)
	own := head{last: 4, activation: 1, streamSeq: 9, msgID: "mine"}
	for _, tc := range []struct {
		name      string
		h         head
		uncertain bool
		wantLast  uint64
		wantErrs  []error
	}{
		{"answered refusal", own, false, 0, []error{memory.ErrConflict}},
		{"unanswered attempt stored", own, true, 4, nil},
		{"unanswered attempt, another record last", head{last: 5, msgID: "theirs"}, true, 0, []error{memory.ErrOutcomeUnknown, memory.ErrConflict}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			last, err := settle(tc.h, conflict, tc.uncertain, "mine")
			if last != tc.wantLast {
				t.Errorf("last = %d, want %d", last, tc.wantLast)
			}
			if len(tc.wantErrs) == 0 && err != nil {
				t.Errorf("error = %v, want none", err)
			}
			for _, want := range tc.wantErrs {
				if !errors.Is(err, want) {
					t.Errorf("error = %v, want it to wrap %v", err, want)
				}
			}
		})
	}
}

// TestOutcomeUnknown appends while the only server is down: the append is
// resent until its context ends, then fails with ErrOutcomeUnknown; once
// the server is back, the journal is as the append left it and takes
// appends again.
func TestOutcomeUnknown(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	nc := natstest.Connect(t, srv.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	j, err := New(t.Context(), Config{Conn: nc, AttemptTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tail, err := j.Append(t.Context(), "s", 0, 0, userText("before"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Shutdown()
	srv.WaitForShutdown()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err = j.Append(ctx, "s", 0, tail, userText("during"))
	if !errors.Is(err, memory.ErrOutcomeUnknown) {
		t.Fatalf("append while the server is down: error = %v, want ErrOutcomeUnknown", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want it to wrap the context's error", err)
	}
	srv.Restart(t)
	rctx, rcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer rcancel()
	now, err := tailWhenBack(rctx, j)
	if err != nil {
		t.Fatal(err)
	}
	if now != tail && now != tail+1 {
		t.Fatalf("tail after the server came back = %d, want %d or %d", now, tail, tail+1)
	}
	_, err = j.Append(rctx, "s", 0, now, userText("after"))
	if errors.Is(err, memory.ErrConflict) && now == tail {
		// The append whose outcome was unknown was still in the
		// connection's reconnect buffer and landed after the tail was
		// read: the conflict says so, and the tail read again has it.
		if now, err = j.Tail(rctx, "s"); err != nil {
			t.Fatal(err)
		}
		if now != tail+1 {
			t.Fatalf("tail after a conflict = %d, want %d", now, tail+1)
		}
		_, err = j.Append(rctx, "s", 0, now, userText("after"))
	}
	if err != nil {
		t.Errorf("append after the server came back: %v", err)
	}
}

// tailWhenBack reads the session's tail once the connection is back.
func tailWhenBack(ctx context.Context, j *Journal) (uint64, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if j.cfg.Conn.IsConnected() {
			return j.Tail(ctx, "s")
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
	}
}
