package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
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
// keeping an existing file's mode.
type WriteFile struct{}

// NewWriteFile returns write_file.
func NewWriteFile(Options) *WriteFile { return &WriteFile{} }

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
func (*WriteFile) Execute(ctx context.Context, p WriteFileParams, tc *toolsys.Context) (toolsys.Result, error) {
	ws, abs, err := resolve(tc, p.Path)
	if err != nil {
		return toolsys.ErrorResult("%v", err), nil
	}
	rel := ws.Rel(abs)
	if abs == ws.Root() {
		return toolsys.ErrorResult("%s is the workspace root, not a file", p.Path), nil
	}
	mode, exists, err := existingMode(abs)
	if errors.Is(err, errIsDir) {
		return toolsys.ErrorResult("%s is a directory, not a file", rel), nil
	}
	if err != nil {
		return fileError(rel, err), nil
	}
	if err := ctx.Err(); err != nil {
		return toolsys.Result{}, fmt.Errorf("write_file %s: %w", rel, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fileError(rel, err), nil
	}
	if err := writeAtomic(abs, []byte(p.Content), mode); err != nil {
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
