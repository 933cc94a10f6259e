package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

const (
	// maxGrepLine is how much of a long line grep searches.
	maxGrepLine = 64 << 10
	// maxGrepShown is how much of a matching line grep shows.
	maxGrepShown = 400
	// maxGrepFileSize is the size above which grep skips a file.
	maxGrepFileSize = 32 << 20
)

// GrepParams are grep's arguments.
type GrepParams struct {
	Pattern         string `json:"pattern" jsonschema:"description=Regular expression (RE2 syntax) searched in each line"`
	Path            string `json:"path,omitempty" jsonschema:"description=File or directory to search (relative to the workspace root). Default: the workspace root."`
	Include         string `json:"include,omitempty" jsonschema:"description=Only search files matching this glob: a pattern without / (like *.go) matches file names at any depth; a pattern with / (like **/*.md or src/*.c) matches the path below path"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty" jsonschema:"description=Match without regard to case"`
	MaxResults      int    `json:"max_results,omitempty" jsonschema:"description=Maximum number of matching lines to return (default 200),minimum=1"`
}

// Grep is the grep tool: it searches files for a regular expression and
// returns "path:line:text" lines. It skips binary files, files over 32 MiB,
// symlinks and .git directories.
type Grep struct {
	maxResults int
}

// NewGrep returns grep; opts.GrepMaxResults is its default result cap.
func NewGrep(opts Options) *Grep {
	return &Grep{maxResults: opts.withDefaults().GrepMaxResults}
}

// Name returns "grep".
func (*Grep) Name() string { return "grep" }

// Description tells the model how to use grep.
func (*Grep) Description() string {
	return "Search file contents with a regular expression (RE2). Returns path:line:text for each matching " +
		"line. Narrow the search with path and include (e.g. *.go)."
}

// Permission is PermReadOnly.
func (*Grep) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams is nil.
func (*Grep) SecretParams() []string { return nil }

// Idempotent is true.
func (*Grep) Idempotent() bool { return true }

// Execute runs the search.
func (t *Grep) Execute(ctx context.Context, p GrepParams, tc *toolsys.Context) (toolsys.Result, error) {
	expr := p.Pattern
	if p.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return toolsys.ErrorResult("invalid regular expression %q: %v", p.Pattern, err), nil
	}
	var include *globPattern
	includeBase := false
	if p.Include != "" {
		g, err := compileGlob(p.Include)
		if err != nil {
			return toolsys.ErrorResult("invalid include pattern %q: %v", p.Include, err), nil
		}
		include, includeBase = &g, !strings.Contains(p.Include, "/")
	}
	dir := p.Path
	if dir == "" {
		dir = "."
	}
	ws, base, err := resolve(tc, dir)
	if err != nil {
		return toolsys.ErrorResult("%v", err), nil
	}
	limit := p.MaxResults
	if limit <= 0 {
		limit = t.maxResults
	}
	s := &grepSearch{ctx: ctx, ws: ws, re: re, limit: limit}

	st, err := os.Stat(base)
	if err != nil {
		return fileError(ws.Rel(base), err), nil
	}
	if !st.IsDir() {
		if err := s.file(base); err != nil && !errors.Is(err, errGrepFull) {
			return s.fail(err)
		}
	} else {
		err = filepath.WalkDir(base, func(abs string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				if abs == base {
					return err
				}
				return skipEntry(d)
			}
			switch {
			case d.IsDir():
				if d.Name() == ".git" && abs != base {
					return filepath.SkipDir
				}
				return nil
			case !d.Type().IsRegular():
				return nil // symlinks, devices, sockets
			}
			if include != nil {
				name := relSlash(base, abs)
				if includeBase {
					name = d.Name()
				}
				if !include.match(name) {
					return nil
				}
			}
			return s.file(abs)
		})
		if err != nil && !errors.Is(err, errGrepFull) {
			return s.fail(err)
		}
	}

	meta := map[string]any{"matches": len(s.lines), "files": s.files, "truncated": s.truncated}
	if len(s.lines) == 0 {
		return toolsys.Result{Content: fmt.Sprintf("No matches for %q under %s", p.Pattern, ws.Rel(base)), Metadata: meta}, nil
	}
	out := strings.Join(s.lines, "\n") + "\n"
	if s.truncated {
		out += fmt.Sprintf("[results capped at %d matching lines; narrow the pattern, path or include]\n", limit)
	}
	return toolsys.Result{Content: out, Metadata: meta}, nil
}

// errGrepFull stops a walk once the result cap is reached.
var errGrepFull = errors.New("grep: result cap reached")

// grepSearch collects the matches of one grep call.
type grepSearch struct {
	ctx       context.Context
	ws        *toolsys.Workspace
	re        *regexp.Regexp
	limit     int
	lines     []string
	files     int
	truncated bool
}

// file searches one regular file; it skips binary and oversized files and
// files it cannot read.
func (s *grepSearch) file(abs string) error {
	f, err := os.Open(abs)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > maxGrepFileSize {
		return nil
	}
	head := make([]byte, sniffLen)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if isBinary(head) {
		return nil
	}
	rel := s.ws.Rel(abs)
	matched := false
	err = eachLine(io.MultiReader(bytes.NewReader(head), f), maxGrepLine, func(n int, line []byte, _ bool) bool {
		if !s.re.Match(line) {
			return true
		}
		if len(s.lines) == s.limit {
			s.truncated = true
			return false
		}
		matched = true
		if len(line) > maxGrepShown {
			s.lines = append(s.lines, fmt.Sprintf("%s:%d:%s [...]", rel, n, cutUTF8(line, maxGrepShown)))
		} else {
			s.lines = append(s.lines, fmt.Sprintf("%s:%d:%s", rel, n, line))
		}
		return true
	})
	if matched {
		s.files++
	}
	if err != nil {
		return nil // an unreadable file is skipped
	}
	if s.truncated {
		return errGrepFull
	}
	return s.ctx.Err()
}

// fail turns a walk error into the call's outcome: cancellation is a Go
// error, anything else a message for the model.
func (s *grepSearch) fail(err error) (toolsys.Result, error) {
	if s.ctx.Err() != nil {
		return toolsys.Result{}, fmt.Errorf("grep: %w", s.ctx.Err())
	}
	return toolsys.ErrorResult("grep failed: %v", err), nil
}
