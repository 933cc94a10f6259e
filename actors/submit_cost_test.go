package actors_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
)

// mallocsPerTurn returns the mean number of heap allocations of the whole
// process over turns Submits to f's session, after one warm-up turn.
func mallocsPerTurn(t *testing.T, f *fixture, turns int) float64 {
	t.Helper()
	ctx := context.Background()
	if _, err := f.sess.Submit(ctx, messages.UserText("go")); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range turns {
		if _, err := f.sess.Submit(ctx, messages.UserText("go")); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(turns)
}

// TestSubmit_StreamedPiecesCostNothing checks that the pieces of a streamed
// reply cost a caller of Submit, which reads only how the turn ended,
// nothing beyond what the provider spends producing them: a reply streamed
// in 500 pieces allocates, per extra piece, less than one allocation more
// than a reply in one piece (a piece forwarded to the session and
// published as a TextDelta costs several). Stream still yields every piece.
func TestSubmit_StreamedPiecesCostNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without the race detector")
	}
	const pieces = 500
	long := strings.Repeat("x", pieces*scripted.DefaultChunkSize)
	// A buffer that holds every piece, so that Stream, whose consumer
	// may fall behind an in-process model, keeps them all.
	buffer := func(c *actors.Config) { c.EventBuffer = 2 * pieces }
	short := newFixture(t, textScript("x"), nil, buffer)
	streamed := newFixture(t, textScript(long), nil, buffer)
	const turns = 20
	base := mallocsPerTurn(t, short, turns)
	got := mallocsPerTurn(t, streamed, turns)
	if perPiece := (got - base) / (pieces - 1); perPiece >= 1 {
		t.Errorf("a turn of %d streamed pieces allocated %.0f times, one of a single piece %.0f: %.2f per piece, want under 1",
			pieces, got, base, perPiece)
	}

	deltas := 0
	var text strings.Builder
	for ev, err := range streamed.sess.Stream(context.Background(), messages.UserText("go")) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := ev.(messages.TextDelta); ok {
			deltas++
			text.WriteString(d.Text)
		}
	}
	if deltas != pieces || text.String() != long {
		t.Errorf("Stream yielded %d TextDeltas holding %d bytes, want %d holding %d", deltas, text.Len(), pieces, len(long))
	}
}
