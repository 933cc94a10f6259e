package main

import (
	"io"
	"sync"

	"github.com/agcore/agcore/redact"
)

// maskedOutput is a command's stdout or stderr behind the process's
// redactor: every write is masked before it reaches the stream, and the
// stream's descriptor stays visible, so that terminal detection sees
// through it.
type maskedOutput struct {
	io.Writer
	fd func() uintptr // nil when the stream has no descriptor
}

// masked returns w with every write masked by r.
func masked(w io.Writer, r *redact.Redactor) io.Writer {
	m := &maskedOutput{Writer: r.Writer(w)}
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		m.fd = f.Fd
	}
	if m.fd == nil {
		return struct{ io.Writer }{m.Writer}
	}
	return m
}

// Fd returns the underlying stream's descriptor.
func (m *maskedOutput) Fd() uintptr { return m.fd() }

// lockedOutput serialises the writes to a stream that several writers
// share (the command's masked stderr and the logger's), so that their
// lines never interleave and a stream that is not safe for concurrent use
// (a buffer in a test) is written one call at a time. The stream's
// descriptor stays visible, as in maskedOutput.
type lockedOutput struct {
	mu sync.Mutex
	w  io.Writer
}

// locked returns w behind a lock, keeping its Fd method when it has one.
func locked(w io.Writer) io.Writer {
	l := &lockedOutput{w: w}
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		return &lockedFile{lockedOutput: l, fd: f.Fd}
	}
	return l
}

// Write writes p to the stream, one call at a time.
func (l *lockedOutput) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lockedFile is a lockedOutput whose stream has a descriptor.
type lockedFile struct {
	*lockedOutput
	fd func() uintptr
}

// Fd returns the underlying stream's descriptor.
func (l *lockedFile) Fd() uintptr { return l.fd() }
