package actors

import (
	"testing"

	"github.com/agcore/agcore/toolsys"
)

// TestProgressLatch_BoundsTheMailbox floods one call's latch with reports
// while the session takes none: only maxQueuedProgress are sent, the
// latest of the rest is held, and the session publishes it after the
// reports sent before it, so the reports it publishes only grow.
func TestProgressLatch_BoundsTheMailbox(t *testing.T) {
	var l progressLatch
	var sent []float64
	for i := 1; i <= 10_000; i++ {
		if p := (toolsys.Progress{Progress: float64(i)}); l.offer(p) {
			sent = append(sent, p.Progress)
		}
	}
	if len(sent) != maxQueuedProgress {
		t.Fatalf("%d reports sent to the mailbox, want %d", len(sent), maxQueuedProgress)
	}
	var published []float64
	for _, p := range sent {
		published = append(published, p)
		if held, ok := l.take(); ok {
			published = append(published, held.Progress)
		}
	}
	if n := len(published); n != maxQueuedProgress+1 || published[n-1] != 10_000 {
		t.Fatalf("published %d reports ending with %v, want %d ending with the latest (10000)", n, published[n-1], maxQueuedProgress+1)
	}
	for i := 1; i < len(published); i++ {
		if published[i] <= published[i-1] {
			t.Fatalf("published out of order: %v after %v", published[i], published[i-1])
		}
	}
	// Once the mailbox has drained, reports are sent as they come again.
	if !l.offer(toolsys.Progress{Progress: 10_001}) {
		t.Error("a report after the mailbox drained was held back")
	}
	if _, ok := l.take(); ok {
		t.Error("a report was held with nothing held back")
	}
}
