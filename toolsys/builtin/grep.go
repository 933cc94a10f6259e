package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
// returns "path:line:text" lines. It walks and opens through the workspace
// root and reads regular files only (see toolsys.Workspace.OpenRegular). It
// skips binary files, files over 32 MiB, symlinks, named pipes, sockets,
// devices, .git directories and, unless Options.AllowHardlinks is set,
// files with several hard links; a single file named by path that it cannot
// search is an error instead.
type Grep struct {
	maxResults int
	policy     toolsys.FilePolicy
}

// NewGrep returns grep; opts.GrepMaxResults is its default result cap, and
// it uses opts.AllowHardlinks.
func NewGrep(opts Options) *Grep {
	opts = opts.withDefaults()
	return &Grep{maxResults: opts.GrepMaxResults, policy: opts.filePolicy()}
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
	s := &grepSearch{ctx: ctx, ws: ws, policy: t.policy, re: re, limit: limit}
	top := display(base)

	st, err := ws.FS().Stat(base)
	if err != nil {
		return fileError(top, err), nil
	}
	if !st.IsDir() {
		err := s.file(base)
		var skip *grepSkip
		if errors.As(err, &skip) {
			return fileError(top, skip.err), nil
		}
		if err != nil && !errors.Is(err, errGrepFull) {
			return s.fail(err)
		}
	} else {
		err = ws.WalkDir(base, func(name string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				if name == top {
					return err
				}
				return skipEntry(d)
			}
			switch {
			case d.IsDir():
				if d.Name() == ".git" && name != top {
					return fs.SkipDir
				}
				return nil
			case !d.Type().IsRegular():
				return nil // symlinks, devices, sockets, named pipes
			}
			if include != nil {
				rel := below(top, name)
				if includeBase {
					rel = d.Name()
				}
				if !include.match(rel) {
					return nil
				}
			}
			err = s.file(name)
			var skip *grepSkip
			if errors.As(err, &skip) {
				if errors.Is(skip.err, toolsys.ErrHardlinked) {
					s.hardlinked++
				}
				return nil
			}
			return err
		})
		if err != nil && !errors.Is(err, errGrepFull) {
			return s.fail(err)
		}
	}

	meta := map[string]any{"matches": len(s.lines), "files": s.files, "truncated": s.truncated}
	if s.hardlinked > 0 {
		meta["skipped_hardlinked"] = s.hardlinked
	}
	var out string
	if len(s.lines) == 0 {
		out = fmt.Sprintf("No matches for %q under %s", p.Pattern, top)
	} else {
		out = strings.Join(s.lines, "\n") + "\n"
	}
	if s.truncated {
		out += fmt.Sprintf("[results capped at %d matching lines; narrow the pattern, path or include]\n", limit)
	}
	if s.hardlinked > 0 {
		if len(s.lines) == 0 {
			out += "\n"
		}
		files := "1 file with more than one hard link was"
		if s.hardlinked > 1 {
			files = fmt.Sprintf("%d files with more than one hard link were", s.hardlinked)
		}
		out += fmt.Sprintf("[%s not searched (the AllowHardlinks option allows them)]\n", files)
	}
	return toolsys.Result{Content: out, Metadata: meta}, nil
}

// errGrepFull stops a walk once the result cap is reached.
var errGrepFull = errors.New("grep: result cap reached")

// grepSkip says a file was not searched because it could not be opened
// as a regular file the policy accepts; err says why.
type grepSkip struct{ err error }

// Error implements error.
func (e *grepSkip) Error() string { return e.err.Error() }

// Unwrap returns why the file was skipped.
func (e *grepSkip) Unwrap() error { return e.err }

// grepSearch collects the matches of one grep call.
type grepSearch struct {
	ctx        context.Context
	ws         *toolsys.Workspace
	policy     toolsys.FilePolicy
	re         *regexp.Regexp
	limit      int
	lines      []string
	files      int
	hardlinked int
	truncated  bool
}

// file searches the regular file at the workspace name name; it returns a
// *grepSkip when it cannot open it as one, and skips binary and oversized
// files and read errors.
func (s *grepSearch) file(name string) error {
	f, st, err := s.ws.OpenRegular(name, s.policy)
	if err != nil {
		return &grepSkip{err: err}
	}
	defer f.Close()
	if st.Size() > maxGrepFileSize {
		return nil
	}
	head := make([]byte, sniffLen)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if isBinary(head) {
		return nil
	}
	rel := display(name)
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
