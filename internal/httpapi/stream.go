package httpapi

import (
	"context"
	"iter"
	"net/http"
	"time"

	"github.com/agcore/agcore/messages"
)

type streamItem struct {
	ev  messages.Event
	err error
}

// streamOptions say what kind of stream serveStream sends.
type streamOptions struct {
	session string
	// watch marks a stream of every event of the session (it ends at
	// shutdown); otherwise the stream is one turn's and ends after
	// turn_ended.
	watch bool
}

// serveStream sends the events of open(ctx) as Server-Sent Events
// (approval_pending included: the session publishes it), with heartbeat
// comments.
//
// The runtime's events are read only as fast as the client takes them; the
// runtime's own subscriber buffer decouples the session from a slow client
// (see actors.Session.Stream): text deltas that do not fit are dropped
// (turn_ended carries the full text), and when another event does not fit
// the stream ends with a stream_error frame whose code is slow_subscriber
// while the turn goes on. A client that does not read at all is
// disconnected after Config.StreamWriteTimeout.
//
// A turn stream waits for its first event before answering, up to one
// heartbeat interval, so that an error before the turn starts (a busy
// session under the reject policy, a runtime shutting down) is an ordinary
// HTTP error; later errors end the stream with a stream_error frame.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, o streamOptions, open func(context.Context) iter.Seq2[messages.Event, error]) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	items := make(chan streamItem)
	go func() {
		defer close(items)
		for ev, err := range open(ctx) {
			select {
			case items <- streamItem{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()

	var tick <-chan time.Time
	if s.cfg.Heartbeat > 0 {
		t := time.NewTicker(s.cfg.Heartbeat)
		defer t.Stop()
		tick = t.C
	}

	var first *streamItem
	if !o.watch {
		select {
		case it, ok := <-items:
			if !ok {
				return // ctx ended
			}
			if it.err != nil {
				writeError(w, runtimeError(it.err))
				return
			}
			first = &it
		case <-tick:
		case <-ctx.Done():
			return
		}
	}

	sse, err := startSSE(w, s.cfg.StreamWriteTimeout)
	if err != nil {
		return
	}
	s.streams.Add(1)
	defer s.streams.Add(-1)

	// send writes one runtime event and reports whether the stream goes on.
	send := func(it streamItem) bool {
		if it.err != nil {
			_ = sse.streamError(runtimeError(it.err))
			return false
		}
		if err := sse.runtimeEvent(it.ev); err != nil {
			s.log.Debug().Err(err).Str("session", o.session).Msg("SSE client gone")
			return false
		}
		_, ended := it.ev.(messages.TurnEnded)
		return o.watch || !ended
	}
	if first != nil && !send(*first) {
		return
	}
	closed := s.closed
	if !o.watch {
		closed = nil // a turn stream ends with its turn, cancelled if need be
	}
	for {
		select {
		case it, ok := <-items:
			if !ok || !send(it) {
				return
			}
		case <-tick:
			if err := sse.comment("keep-alive"); err != nil {
				return
			}
		case <-closed:
			_ = sse.streamError(apiErr(http.StatusServiceUnavailable, CodeShuttingDown, "the server is shutting down"))
			return
		case <-ctx.Done():
			return
		}
	}
}
