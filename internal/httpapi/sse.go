package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agcore/agcore/messages"
)

// StreamErrorEvent is the SSE event type of a frame that ends a stream for
// a reason other than the end of the turn: its data is an ErrorBody (for
// example code slow_subscriber, shutting_down or session_stopped). It is
// distinct from the "error" events of a turn (messages.ErrorEvent).
const StreamErrorEvent = "stream_error"

// sseWriter writes Server-Sent Events: one frame per event, each with an
// id, flushed at once, each write bounded by a deadline.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration // per write; <= 0 means none
	seq     int
}

// startSSE sends the headers of an event stream.
func startSSE(w http.ResponseWriter, timeout time.Duration) (*sseWriter, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell reverse proxies not to buffer
	s := &sseWriter{w: w, rc: http.NewResponseController(w), timeout: timeout}
	w.WriteHeader(http.StatusOK)
	return s, s.flush()
}

// event writes one event frame; data must be one line (compact JSON).
func (s *sseWriter) event(typ string, data []byte) error {
	s.seq++
	buf := make([]byte, 0, len(data)+len(typ)+32)
	buf = append(buf, "id: "...)
	buf = strconv.AppendInt(buf, int64(s.seq), 10)
	buf = append(buf, "\nevent: "...)
	buf = append(buf, typ...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	return s.write(buf)
}

// runtimeEvent writes a runtime event; its data is the event in the
// messages.MarshalEvent form ({"type": ..., "data": {...}}).
func (s *sseWriter) runtimeEvent(ev messages.Event) error {
	data, err := messages.MarshalEvent(ev)
	if err != nil {
		return err
	}
	return s.event(ev.EventType(), data)
}

// streamError writes the stream_error frame that ends a stream.
func (s *sseWriter) streamError(err error) error {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		e = &Error{Code: CodeInternal, Message: "internal error"}
	}
	data, merr := json.Marshal(ErrorBody{Error: e})
	if merr != nil {
		return merr
	}
	return s.event(StreamErrorEvent, data)
}

// comment writes a comment line, which clients ignore: a heartbeat.
func (s *sseWriter) comment(text string) error {
	return s.write([]byte(": " + text + "\n\n"))
}

func (s *sseWriter) write(b []byte) error {
	if s.timeout > 0 {
		// A writer that cannot take deadlines just has none.
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	}
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.flush()
}

func (s *sseWriter) flush() error {
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}
