package builtin

import (
	"io"
	"sync"
	"unicode/utf8"
)

// outputLog collects a process's combined output. It keeps at least the
// last max bytes (at most twice that before it compacts), counts everything
// ever written, and tells waiters when output arrives. It is safe for
// concurrent use.
type outputLog struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	total   int64         // bytes ever written
	changed chan struct{} // closed and replaced by every write
}

func newOutputLog(max int) *outputLog {
	return &outputLog{max: max, changed: make(chan struct{})}
}

// Write appends b, dropping the oldest bytes beyond the limit.
func (l *outputLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	l.total += int64(len(b))
	if len(l.buf) > 2*l.max {
		n := copy(l.buf, l.buf[len(l.buf)-l.max:])
		l.buf = l.buf[:n]
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return len(b), nil
}

// readFrom copies r into the log until r fails or ends.
func (l *outputLog) readFrom(r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = l.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// since returns the output written from offset off on, the offset to ask
// from next time, and how many bytes from off on were already dropped. The
// returned text starts and, unless final, ends on a UTF-8 boundary: an
// incomplete trailing character is held back for the next call.
func (l *outputLog) since(off int64, final bool) (data []byte, next, dropped int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := l.total - int64(len(l.buf))
	if off < start {
		dropped, off = start-off, start
		// Skip the rest of a character cut by the drop.
		for skip := 0; skip < utf8.UTFMax-1 && off < l.total && !utf8.RuneStart(l.buf[off-start]); skip++ {
			off++
			dropped++
		}
	}
	data = l.buf[off-start:]
	if !final {
		data = cutUTF8(data, len(data))
	}
	return append([]byte(nil), data...), off + int64(len(data)), dropped
}

// tail returns the last n bytes of output, starting on a UTF-8 boundary,
// and how many bytes before them are left out.
func (l *outputLog) tail(n int) ([]byte, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	data := l.buf
	if len(data) > n {
		data = data[len(data)-n:]
	}
	for skip := 0; skip < utf8.UTFMax-1 && len(data) > 0 && !utf8.RuneStart(data[0]); skip++ {
		data = data[1:]
	}
	return append([]byte(nil), data...), l.total - int64(len(data))
}

// wait returns a channel closed by the next write.
func (l *outputLog) wait() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}
