package main

import (
	"io"

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
