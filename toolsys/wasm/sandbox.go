package wasm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tetratelabs/wazero"
	experimentalsysfs "github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// A run's sandbox is what wazero gives a module and nothing more: the
// arguments, the environment the tool declared, an empty standard input,
// capped standard output and error, the clocks, a random source, and at
// most the workspace, mounted at "/". WASI preview 1 has no way to open a
// socket or start a process, and wazero preopens none; a tool gets no
// host environment variable.

// errOutputLimit is what a tool's write past the output cap returns (the
// tool sees an I/O error).
var errOutputLimit = errors.New("output limit reached")

// capWriter keeps the first limit bytes written to it and counts all. With
// fail set, a write past the limit fails.
type capWriter struct {
	limit int
	fail  bool
	buf   []byte
	total int64
}

// Write implements io.Writer.
func (w *capWriter) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	room := max(w.limit-len(w.buf), 0)
	if len(p) <= room {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	w.buf = append(w.buf, p[:room]...)
	if w.fail {
		return room, errOutputLimit
	}
	return len(p), nil
}

// eof is an empty standard input.
type eof struct{}

// Read implements io.Reader.
func (eof) Read([]byte) (int, error) { return 0, io.EOF }

// randReader is the random source of a run: the system's.
type randReader struct{}

// Read implements io.Reader.
func (randReader) Read(p []byte) (int, error) { return rand.Read(p) }

// mountRoot mounts fsys at "/", the only preopened directory.
func mountRoot(fsys *rootFS) wazero.FSConfig {
	return wazero.NewFSConfig().(experimentalsysfs.FSConfig).WithSysFSMount(fsys, "/")
}

// failure is how a run that did not end with status 0 ended.
type failure struct {
	// canceled is the caller's context error when it ended the run.
	canceled error
	// timedOut says the run passed the runtime's own timeout.
	timedOut bool
	// exitCode is a non-zero exit status.
	exitCode uint32
	// trap describes a trap ("wasm error: unreachable").
	trap string
}

// failed reports whether the run did not end with status 0.
func (f failure) failed() bool {
	return f.canceled != nil || f.timedOut || f.exitCode != 0 || f.trap != ""
}

// classify sorts the error of a run under ctx (the caller's context). A
// nil error and an exit with status 0 are the zero failure.
func classify(ctx context.Context, err error) failure {
	if err == nil {
		return failure{}
	}
	var ee *sys.ExitError
	if errors.As(err, &ee) {
		switch code := ee.ExitCode(); code {
		case 0:
			return failure{}
		case sys.ExitCodeDeadlineExceeded, sys.ExitCodeContextCanceled:
			if ctx.Err() != nil {
				return failure{canceled: fmt.Errorf("run stopped: %w", ctx.Err())}
			}
			return failure{timedOut: true}
		default:
			return failure{exitCode: code}
		}
	}
	if ctx.Err() != nil {
		return failure{canceled: fmt.Errorf("run stopped: %w", ctx.Err())}
	}
	return failure{trap: trapText(err)}
}

// trapText is the first line of a trap's error, from "wasm error:" on.
func trapText(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if i := strings.Index(s, "wasm error:"); i >= 0 {
		s = s[i:]
	}
	return s
}
