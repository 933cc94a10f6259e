package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// EditFileParams are edit_file's arguments. A call is either a text edit
// (old_string, new_string, optional replace_all) or a line-range edit
// (start_line, end_line, new_string); Precheck enforces exactly one form.
type EditFileParams struct {
	Path       string `json:"path" jsonschema:"description=Path of the file to edit (relative to the workspace root)"`
	OldString  string `json:"old_string,omitempty" jsonschema:"description=Text edit: the exact text to replace. It must occur exactly once unless replace_all is set; include surrounding lines to make it unique."`
	NewString  string `json:"new_string" jsonschema:"description=The replacement text (empty to delete)"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"description=Text edit: replace every occurrence of old_string"`
	StartLine  int    `json:"start_line,omitempty" jsonschema:"description=Line-range edit: first line to replace (1-based),minimum=1"`
	EndLine    int    `json:"end_line,omitempty" jsonschema:"description=Line-range edit: last line to replace (inclusive),minimum=1"`
}

// EditFile is the edit_file tool: it replaces text in an existing file, by
// exact match or by line range, writes the file atomically and reports the
// change as diff statistics and a short diff. It reads and writes through
// the workspace root, regular files only, refusing a file with several hard
// links unless Options.AllowHardlinks is set.
type EditFile struct {
	policy toolsys.FilePolicy
}

// NewEditFile returns edit_file; it uses opts.AllowHardlinks.
func NewEditFile(opts Options) *EditFile { return &EditFile{policy: opts.filePolicy()} }

// Name returns "edit_file".
func (*EditFile) Name() string { return "edit_file" }

// Description tells the model how to use edit_file.
func (*EditFile) Description() string {
	return "Edit an existing file. Text edit: give old_string (exact text that occurs exactly once, " +
		"or set replace_all) and new_string. Line-range edit: give start_line, end_line and new_string " +
		"to replace those lines (read the file first to get line numbers). Returns a short diff."
}

// Permission is PermWrite.
func (*EditFile) Permission() toolsys.Permission { return toolsys.PermWrite }

// SecretParams is nil: file content never receives secrets.
func (*EditFile) SecretParams() []string { return nil }

// Idempotent is false: a replace_all or a line-range edit applied twice
// changes the file twice.
func (*EditFile) Idempotent() bool { return false }

// Precheck accepts exactly one of the two forms.
func (*EditFile) Precheck(p EditFileParams) error {
	text := p.OldString != ""
	lines := p.StartLine != 0 || p.EndLine != 0
	switch {
	case text && lines:
		return errors.New("give either old_string (text edit) or start_line and end_line (line-range edit), not both")
	case !text && !lines:
		return errors.New("give old_string to replace text, or start_line and end_line to replace a range of lines")
	case lines && (p.StartLine < 1 || p.EndLine < 1):
		return errors.New("a line-range edit needs both start_line and end_line (1-based)")
	case lines && p.StartLine > p.EndLine:
		return fmt.Errorf("start_line (%d) is after end_line (%d)", p.StartLine, p.EndLine)
	case lines && p.ReplaceAll:
		return errors.New("replace_all applies to old_string edits only")
	case text && p.OldString == p.NewString:
		return errors.New("old_string and new_string are identical; nothing would change")
	}
	return nil
}

// Execute edits the file.
func (t *EditFile) Execute(ctx context.Context, p EditFileParams, tc *toolsys.Context) (toolsys.Result, error) {
	if err := t.Precheck(p); err != nil {
		return toolsys.ErrorResult("%v", err), nil
	}
	ws, name, err := resolve(tc, p.Path)
	if err != nil {
		return toolsys.ErrorResult("%v", err), nil
	}
	rel := display(name)
	f, st, err := ws.OpenRegular(name, t.policy)
	switch {
	case isDir(err):
		return toolsys.ErrorResult("%s is a directory, not a file", rel), nil
	case errors.Is(err, fs.ErrNotExist):
		return toolsys.ErrorResult("file not found: %s (use write_file to create a file)", rel), nil
	case err != nil:
		return fileError(rel, err), nil
	}
	data, err := io.ReadAll(f)
	_ = f.Close()
	if err != nil {
		return fileError(rel, err), nil
	}
	if isBinary(data) {
		return toolsys.ErrorResult("binary file: %s cannot be edited as text", rel), nil
	}
	content := string(data)

	var spans []span
	if p.OldString != "" {
		old, repl := p.OldString, p.NewString
		n := strings.Count(content, old)
		if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(old, "\n") {
			// The file uses CRLF line endings; the model usually writes LF.
			old, repl = toCRLF(old), toCRLF(repl)
			n = strings.Count(content, old)
		}
		switch {
		case n == 0:
			return toolsys.ErrorResult("old_string not found in %s", rel), nil
		case n > 1 && !p.ReplaceAll:
			return toolsys.ErrorResult("old_string matches %d times in %s; add context or set replace_all", n, rel), nil
		}
		for at := 0; ; {
			i := strings.Index(content[at:], old)
			if i < 0 {
				break
			}
			spans = append(spans, span{start: at + i, end: at + i + len(old), repl: repl})
			at += i + len(old)
		}
	} else {
		s, msg := lineSpan(content, p.StartLine, p.EndLine, p.NewString)
		if msg != "" {
			return toolsys.ErrorResult("%s in %s", msg, rel), nil
		}
		spans = []span{s}
	}

	updated, hunks := applySpans(content, spans)
	if updated == content {
		return toolsys.ErrorResult("the edit would not change %s", rel), nil
	}
	if err := ctx.Err(); err != nil {
		return toolsys.Result{}, fmt.Errorf("edit_file %s: %w", rel, err)
	}
	if err := writeAtomic(ws, name, []byte(updated), st.Mode().Perm()); err != nil {
		return fileError(rel, err), nil
	}
	added, removed := diffStats(hunks)
	tc.Logger.Debug().Str("path", rel).Int("replacements", len(spans)).Int("added", added).Int("removed", removed).Msg("edit_file")
	plural := "s"
	if len(spans) == 1 {
		plural = ""
	}
	return toolsys.Result{
		Content: fmt.Sprintf("Edited %s: %d replacement%s, +%d -%d lines\n%s", rel, len(spans), plural, added, removed, renderHunks(hunks)),
		Metadata: map[string]any{
			"path":         rel,
			"replacements": len(spans),
			"diff_stats":   map[string]any{"added": added, "removed": removed},
		},
	}, nil
}

// lineSpan returns the span replacing lines start..end (1-based, inclusive)
// of content with repl, or a message for the model when the range is out of
// the file. When the replaced lines end with a line ending and a non-empty
// repl does not, one is added so the following line stays separate.
func lineSpan(content string, start, end int, repl string) (span, string) {
	total := strings.Count(content, "\n")
	if content != "" && !strings.HasSuffix(content, "\n") {
		total++
	}
	if end > total {
		return span{}, fmt.Sprintf("end_line %d is past the end of the file (%d lines)", end, total)
	}
	from := 0
	for range start - 1 {
		from += strings.IndexByte(content[from:], '\n') + 1
	}
	to := from
	for range end - start + 1 {
		if k := strings.IndexByte(content[to:], '\n'); k >= 0 {
			to += k + 1
		} else {
			to = len(content)
		}
	}
	if eol := lineEnding(content[from:to]); repl != "" && eol != "" && !strings.HasSuffix(repl, "\n") {
		repl += eol
	}
	return span{start: from, end: to, repl: repl}, ""
}

// lineEnding returns the ending ("\r\n" or "\n") the text ends with, or "".
func lineEnding(s string) string {
	switch {
	case strings.HasSuffix(s, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(s, "\n"):
		return "\n"
	}
	return ""
}

// toCRLF rewrites the line endings of s as "\r\n".
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}
