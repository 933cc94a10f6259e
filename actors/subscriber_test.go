package actors

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/messages"
)

// TestSubscriber_Buffer checks a subscriber's policy when its consumer
// lags: text deltas and tool progress past the limit are dropped, TurnEnded is always
// delivered, and any other event past the limit ends the stream with
// ErrSlowSubscriber.
func TestSubscriber_Buffer(t *testing.T) {
	delta := messages.TextDelta{Text: "x"}
	tool := messages.ToolStarted{CallID: "c"}
	end := messages.TurnEnded{Text: "all of it"}
	progress := messages.ToolProgress{CallID: "c", Progress: 1}
	tests := []struct {
		name    string
		limit   int
		deliver []messages.Event
		want    []string // event types the consumer reads, then "err" for an error
		wantErr error
	}{
		{"within the limit", 3, []messages.Event{tool, delta, end}, []string{"tool_started", "text_delta", "turn_ended"}, nil},
		{"deltas past the limit are dropped", 2, []messages.Event{tool, delta, delta, delta, end}, []string{"tool_started", "text_delta", "turn_ended"}, nil},
		{"progress past the limit is dropped", 2, []messages.Event{tool, progress, progress, progress, end}, []string{"tool_started", "tool_progress", "turn_ended"}, nil},
		{"another event past the limit ends the stream", 1, []messages.Event{tool, tool, end}, []string{"tool_started", "err"}, ErrSlowSubscriber},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSubscriber("t", tt.limit)
			for _, ev := range tt.deliver {
				s.deliver(ev)
			}
			ref := newSessionRef("s", false)
			var got []string
			var gotErr error
			for ev, err := range s.events(t.Context(), ref) {
				if err != nil {
					got, gotErr = append(got, "err"), err
					break
				}
				got = append(got, ev.EventType())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if !errors.Is(gotErr, tt.wantErr) {
				t.Errorf("error = %v, want %v", gotErr, tt.wantErr)
			}
		})
	}
}

// TestSubscriber_ActorGone: a stream whose session actor stopped before it
// saw the submission ends with the reason the actor stopped.
func TestSubscriber_ActorGone(t *testing.T) {
	s := newSubscriber("t", 4)
	ref := newSessionRef("s", false)
	ref.err = ErrClosed
	close(ref.done)
	for _, err := range s.events(t.Context(), ref) {
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("error = %v, want ErrClosed", err)
		}
		return
	}
	t.Fatal("the stream ended without an error")
}
