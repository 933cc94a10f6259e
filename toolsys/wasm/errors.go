package wasm

import (
	"errors"
)

// ErrNotCommand is matched (errors.Is) by a *LoadError for a module that
// is not a WASI command: it exports no "_start" function.
var ErrNotCommand = errors.New("not a WASI command (no _start export)")

// ErrImports is matched (errors.Is) by a *LoadError for a module that
// imports something other than WASI preview 1 functions.
var ErrImports = errors.New("imports something other than wasi_snapshot_preview1 functions")

// ErrNameTaken is matched (errors.Is) by a *LoadError when the tool's name
// is already registered by another tool.
var ErrNameTaken = errors.New("tool name already taken")

// ErrClosed is returned by a call to a tool that has been closed (its file
// was removed or replaced, or its Runtime closed).
var ErrClosed = errors.New("wasm: tool closed")

// LoadError says which file could not be made a tool, and why.
type LoadError struct {
	// Path is the .wasm file.
	Path string
	// Err is the reason: a *HelpError, ErrNotCommand, ErrImports,
	// ErrNameTaken, or a failure to read, compile or run the file.
	Err error
}

// Error implements error: "wasm tool /tools/x.wasm: ...".
func (e *LoadError) Error() string {
	var he *HelpError
	if errors.As(e.Err, &he) && he.File == e.Path {
		return "wasm tool " + e.Err.Error()
	}
	return "wasm tool " + e.Path + ": " + e.Err.Error()
}

// Unwrap returns the reason.
func (e *LoadError) Unwrap() error { return e.Err }
