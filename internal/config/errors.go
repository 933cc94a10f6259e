package config

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is matched (errors.Is) by every *Error.
var ErrInvalid = errors.New("invalid configuration")

// Problem is one thing wrong with a configuration: where it is and what it
// is.
type Problem struct {
	// File is the configuration file; empty for a problem of the defaults,
	// the environment or a flag.
	File string
	// Line is the 1-based line of the key in File; zero when unknown.
	Line int
	// Key is the path of the key: "agents[1].model", "limits.mid_turn".
	Key string
	// Msg says what is wrong.
	Msg string
}

// String renders the problem as "file:line: key: message", leaving out
// the parts that are unknown.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error lists the problems of a configuration, in file order. It matches
// ErrInvalid.
type Error struct {
	Problems []Problem
}

// Error renders one problem per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Is reports whether target is ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }
