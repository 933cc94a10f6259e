package builtin

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/agcore/agcore/toolsys"
)

// WriteFileParams are write_file's arguments.
type WriteFileParams struct {
	Path    string `json:"path" jsonschema:"description=Path of the file to write (relative to the workspace root). Missing parent directories are created."`
	Content string `json:"content" jsonschema:"description=The complete new content of the file"`
}

// WriteFile is the write_file tool: it creates or replaces a file atomically
// (temporary file, fsync, rename), creating missing parent directories and
// keeping an existing file's mode, every step through the workspace root. It
// replaces regular files only: a named pipe, socket or device is refused, and
// so is a file with several hard links unless Options.AllowHardlinks is set.
type WriteFile struct {
	policy toolsys.FilePolicy
}

// NewWriteFile returns write_file; it uses opts.AllowHardlinks.
func NewWriteFile(opts Options) *WriteFile { return &WriteFile{policy: opts.filePolicy()} }

// Name returns "write_file".
func (*WriteFile) Name() string { return "write_file" }

// Description tells the model how to use write_file.
func (*WriteFile) Description() string {
	return "Create a file or replace its whole content. Parent directories are created as needed. " +
		"To change part of an existing file prefer edit_file."
}

// Permission is PermWrite.
func (*WriteFile) Permission() toolsys.Permission { return toolsys.PermWrite }

// SecretParams is nil: file content never receives secrets.
func (*WriteFile) SecretParams() []string { return nil }

// Idempotent is true: writing the same content twice leaves the same file.
func (*WriteFile) Idempotent() bool { return true }

// Execute writes the file.
func (t *WriteFile) Execute(ctx context.Context, p WriteFileParams, tc *toolsys.Context) (toolsys.Result, error) {
	ws, name, err := resolve(tc, p.Path)
	if err != nil {
		return toolsys.ErrorResult("%v", err), nil
	}
	rel := display(name)
	if name == "." {
		return toolsys.ErrorResult("%s is the workspace root, not a file", p.Path), nil
	}
	mode, exists, err := existingMode(ws, name, t.policy)
	if isDir(err) {
		return toolsys.ErrorResult("%s is a directory, not a file", rel), nil
	}
	if err != nil {
		return fileError(rel, err), nil
	}
	if err := ctx.Err(); err != nil {
		return toolsys.Result{}, fmt.Errorf("write_file %s: %w", rel, err)
	}
	if dir := filepath.Dir(name); dir != "." {
		if err := ws.FS().MkdirAll(dir, 0o755); err != nil {
			return fileError(rel, err), nil
		}
	}
	if err := writeAtomic(ws, name, []byte(p.Content), mode); err != nil {
		return fileError(rel, err), nil
	}
	tc.Logger.Debug().Str("path", rel).Int("bytes", len(p.Content)).Bool("created", !exists).Msg("write_file")
	verb := "Wrote"
	if !exists {
		verb = "Created"
	}
	return toolsys.Result{
		Content:  fmt.Sprintf("%s %s (%d bytes)", verb, rel, len(p.Content)),
		Metadata: map[string]any{"path": rel, "bytes": len(p.Content), "created": !exists},
	}, nil
}
