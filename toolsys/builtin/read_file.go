package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

const (
	// defaultReadLimit is how many lines read_file returns when the call
	// names no limit.
	defaultReadLimit = 2000
	// maxReadLine is how many bytes of one line read_file shows.
	maxReadLine = 2000
)

// ReadFileParams are read_file's arguments.
type ReadFileParams struct {
	Path   string `json:"path" jsonschema:"description=Path of the file to read (relative to the workspace root)"`
	Offset int    `json:"offset,omitempty" jsonschema:"description=First line to return (1-based). Default 1.,minimum=1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"description=Maximum number of lines to return. Default 2000.,minimum=1"`
}

// ReadFile is the read_file tool: it returns a text file's lines, numbered,
// from an optional offset, within a line limit and a byte cap. It opens the
// file through the workspace root and reads regular files only: a named
// pipe, socket or device is refused at once, and so is a file with several
// hard links unless Options.AllowHardlinks is set. It refuses binary files
// (a NUL byte in the first 8 KiB).
type ReadFile struct {
	maxBytes int
	policy   toolsys.FilePolicy
}

// NewReadFile returns read_file; it uses opts.MaxReadBytes and
// opts.AllowHardlinks.
func NewReadFile(opts Options) *ReadFile {
	opts = opts.withDefaults()
	return &ReadFile{maxBytes: opts.MaxReadBytes, policy: opts.filePolicy()}
}

// Name returns "read_file".
func (*ReadFile) Name() string { return "read_file" }

// Description tells the model how to use read_file.
func (*ReadFile) Description() string {
	return "Read a text file from the workspace. Lines are returned numbered (line number, tab, text). " +
		"Use offset and limit to page through long files; the output says when more lines remain."
}

// Permission is PermReadOnly.
func (*ReadFile) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams is nil: file paths never carry secrets.
func (*ReadFile) SecretParams() []string { return nil }

// Idempotent is true: reading has no effect.
func (*ReadFile) Idempotent() bool { return true }

// Execute reads the file.
func (t *ReadFile) Execute(ctx context.Context, p ReadFileParams, tc *toolsys.Context) (toolsys.Result, error) {
	ws, name, err := resolve(tc, p.Path)
	if err != nil {
		return toolsys.ErrorResult("%v", err), nil
	}
	rel := display(name)
	f, st, err := ws.OpenRegular(name, t.policy)
	if isDir(err) {
		return toolsys.ErrorResult("%s is a directory, not a file; use list_dir", rel), nil
	}
	if err != nil {
		return fileError(rel, err), nil
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	nh, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fileError(rel, err), nil
	}
	head = head[:nh]
	if isBinary(head) {
		return toolsys.ErrorResult("binary file: %s (%d bytes) cannot be read as text", rel, st.Size()), nil
	}

	offset, limit := max(p.Offset, 1), p.Limit
	if limit <= 0 {
		limit = defaultReadLimit
	}
	var out strings.Builder
	shown, total, last := 0, 0, 0
	truncated := false
	err = eachLine(io.MultiReader(bytes.NewReader(head), f), maxReadLine, func(n int, line []byte, cut bool) bool {
		total = n
		if n%4096 == 0 && ctx.Err() != nil {
			return false
		}
		if n < offset || truncated {
			return true
		}
		if shown == limit {
			truncated = true
			return true
		}
		entry := fmt.Sprintf("%6d\t%s", n, line)
		if cut {
			entry += fmt.Sprintf(" [line cut at %d bytes]", maxReadLine)
		}
		if out.Len()+len(entry)+1 > t.maxBytes && shown > 0 {
			truncated = true
			return true
		}
		out.WriteString(entry)
		out.WriteByte('\n')
		shown++
		last = n
		return true
	})
	if err != nil {
		return fileError(rel, err), nil
	}
	if err := ctx.Err(); err != nil {
		return toolsys.Result{}, fmt.Errorf("read_file %s: %w", rel, err)
	}
	meta := map[string]any{"path": rel, "lines": shown, "total_lines": total, "truncated": truncated}
	switch {
	case total == 0:
		return toolsys.Result{Content: fmt.Sprintf("%s is empty", rel), Metadata: meta}, nil
	case offset > total:
		r := toolsys.ErrorResult("offset %d is past the end of %s (%d lines)", offset, rel, total)
		r.Metadata = meta
		return r, nil
	}
	if truncated {
		fmt.Fprintf(&out, "[showing lines %d-%d of %d; continue with offset=%d]\n", offset, last, total, last+1)
	}
	return toolsys.Result{Content: out.String(), Metadata: meta}, nil
}
