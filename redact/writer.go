package redact

import (
	"io"
	"sync"
)

// Writer returns a writer that masks each write with [Redactor.Bytes]
// before passing it to w in one call. It serialises its writes, so it may be
// shared by goroutines. Text is masked one write at a time: a credential
// split across two writes is not recognised, so give it whole lines.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	return &writer{w: w, mask: r.Bytes}
}

// JSONWriter is Writer for a stream of JSON values, such as the events of
// a JSON logger (zerolog writes one event per call): each write is masked
// with [Redactor.JSON], so that it stays valid JSON.
func (r *Redactor) JSONWriter(w io.Writer) io.Writer {
	return &writer{w: w, mask: r.JSON}
}

type writer struct {
	mu   sync.Mutex
	w    io.Writer
	mask func([]byte) []byte
}

// Write masks p and writes the result to the underlying writer. It reports
// len(p) on success, as io.Writer requires.
func (rw *writer) Write(p []byte) (int, error) {
	out := rw.mask(p)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if _, err := rw.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
