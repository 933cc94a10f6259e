package builtin

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// globPattern is a compiled slash-separated glob. A segment "**" matches any
// number of path segments, none included; every other segment is matched
// against one segment with path.Match ("*", "?", "[a-z]", "\\" escapes).
type globPattern struct {
	segs []string
}

// compileGlob parses pattern. It rejects empty and absolute patterns, ".."
// segments and malformed segments.
func compileGlob(pattern string) (globPattern, error) {
	p := strings.TrimPrefix(pattern, "./")
	if strings.TrimSpace(p) == "" {
		return globPattern{}, errors.New("pattern is empty")
	}
	if strings.HasPrefix(p, "/") {
		return globPattern{}, errors.New("pattern must be relative (the search starts at path)")
	}
	var segs []string
	for _, s := range strings.Split(p, "/") {
		switch {
		case s == "" || s == ".":
			continue
		case s == "..":
			return globPattern{}, errors.New(`pattern must not contain ".."`)
		case s == "**":
			if len(segs) > 0 && segs[len(segs)-1] == "**" {
				continue
			}
		default:
			if _, err := path.Match(s, ""); err != nil {
				return globPattern{}, fmt.Errorf("segment %q: %w", s, err)
			}
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return globPattern{}, errors.New("pattern is empty")
	}
	return globPattern{segs: segs}, nil
}

// states returns the pattern positions reachable after matching the
// segments of rel, a slash-separated relative path ("" or "." for none).
// Position len(g.segs) means the whole pattern has matched.
func (g globPattern) states(rel string) []bool {
	cur := make([]bool, len(g.segs)+1)
	cur[0] = true
	g.closure(cur)
	if rel == "" || rel == "." {
		return cur
	}
	next := make([]bool, len(cur))
	for seg := range strings.SplitSeq(rel, "/") {
		clear(next)
		for i, on := range cur[:len(g.segs)] {
			if !on {
				continue
			}
			if g.segs[i] == "**" {
				next[i] = true
			} else if ok, _ := path.Match(g.segs[i], seg); ok {
				next[i+1] = true
			}
		}
		g.closure(next)
		cur, next = next, cur
	}
	return cur
}

// closure adds, for every reachable "**", the position after it ("**"
// matches zero segments).
func (g globPattern) closure(s []bool) {
	for i, seg := range g.segs {
		if s[i] && seg == "**" {
			s[i+1] = true
		}
	}
}

// match reports whether the whole of rel matches the pattern.
func (g globPattern) match(rel string) bool {
	return g.states(rel)[len(g.segs)]
}

// canDescend reports whether a path below the directory rel could match, so
// a walk may skip directories that cannot.
func (g globPattern) canDescend(rel string) bool {
	st := g.states(rel)
	for _, on := range st[:len(g.segs)] {
		if on {
			return true
		}
	}
	return false
}
