package skills

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits of a SKILL.md.
const (
	// MaxNameBytes is the longest skill name.
	MaxNameBytes = 64
	// MaxDescriptionBytes is the longest description.
	MaxDescriptionBytes = 1024
	// MaxFileBytes is the largest SKILL.md read.
	MaxFileBytes = 1 << 20
)

// ErrMalformed is matched (errors.Is) by every *ParseError.
var ErrMalformed = errors.New("malformed SKILL.md")

// nameRE is the form of a skill name: lower-case letters, digits and
// single hyphens between them.
var nameRE = regexp.MustCompile(`\A[a-z0-9]+(-[a-z0-9]+)*\z`)

// Skill is one parsed SKILL.md.
type Skill struct {
	// Name is the front matter's name: 1 to MaxNameBytes of [a-z0-9] and
	// single hyphens between them ("pdf-forms").
	Name string
	// Description says what the skill is for and when to use it, on one
	// line (line breaks of the front matter folded into spaces).
	Description string
	// Body is the Markdown after the front matter: the instructions
	// load_skill returns.
	Body string
	// File is the path of the SKILL.md it was parsed from.
	File string
	// Dir is the absolute folder of the skill, symlinks resolved: its
	// resources lie below it. Empty for a Skill from Parse alone.
	Dir string
	// Resources are the files beside SKILL.md, relative to Dir with
	// forward slashes, sorted.
	Resources []string
}

// ParseError says which file and line of a SKILL.md is wrong, and why.
type ParseError struct {
	// File is the path of the SKILL.md.
	File string
	// Line is the 1-based line of the problem, 0 when it concerns the
	// whole file.
	Line int
	// Msg says what is wrong.
	Msg string
}

// Error implements error: "skills/pdf/SKILL.md:3: name: ...".
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Is reports whether target is ErrMalformed.
func (e *ParseError) Is(target error) bool { return target == ErrMalformed }

// yamlLineRE finds the line a YAML error names.
var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// Parse parses the content of a SKILL.md named file. The file opens with a
// front matter: a first line "---", YAML, and a line "---" that closes it.
// The YAML is a mapping with a string name and a string description (other
// keys, such as license or metadata, are allowed and ignored). What follows
// the closing line is the body. A UTF-8 byte order mark and CRLF line ends
// are accepted. Every failure is a *ParseError naming file and line.
func Parse(file string, data []byte) (Skill, error) {
	last := 1 // the last line a problem may be on
	bad := func(line int, format string, args ...any) error {
		// YAML counts a lone "\r" as a line break; the file's lines do not.
		return &ParseError{File: file, Line: min(line, last), Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxFileBytes {
		return Skill{}, bad(0, "%d bytes, more than the %d a SKILL.md may have", len(data), MaxFileBytes)
	}
	if !utf8.Valid(data) {
		return Skill{}, bad(0, "not UTF-8 text")
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	lines := strings.SplitAfter(string(data), "\n")
	if trimEOL(lines[0]) != "---" {
		return Skill{}, bad(1, `the file must open with a front matter: a line "---", then name and description, then "---"`)
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if trimEOL(lines[i]) == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return Skill{}, bad(1, `the front matter opened here is never closed by a line "---"`)
	}
	last = end + 1
	s := Skill{File: file}
	if err := s.parseFront(strings.Join(lines[1:end], ""), bad); err != nil {
		return Skill{}, err
	}
	body := strings.ReplaceAll(strings.Join(lines[end+1:], ""), "\r\n", "\n")
	s.Body = strings.TrimLeft(body, "\n")
	return s, nil
}

// frontLine is the file line of the front matter's first line.
const frontLine = 2

// parseFront reads name and description from the front matter text.
func (s *Skill) parseFront(front string, bad func(int, string, ...any) error) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		line, msg := frontLine, strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLineRE.FindStringSubmatchIndex(msg); m != nil {
			n, _ := strconv.Atoi(msg[m[2]:m[3]])
			line = n + frontLine - 1
			msg = strings.TrimPrefix(msg[:m[0]]+msg[m[1]:], ": ")
		}
		return bad(line, "front matter: %s", msg)
	}
	if len(doc.Content) == 0 {
		return bad(frontLine, "front matter is empty: name and description are required")
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return bad(m.Line+frontLine-1, "front matter must be a mapping of keys (name: ..., description: ...)")
	}
	seen := map[string]int{} // key -> file line
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		line := k.Line + frontLine - 1
		if prev, dup := seen[k.Value]; dup {
			return bad(line, "%s: given twice (first on line %d)", k.Value, prev)
		}
		seen[k.Value] = line
		switch k.Value {
		case "name", "description":
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				return bad(line, "%s: must be a string", k.Value)
			}
			if k.Value == "name" {
				s.Name = strings.TrimSpace(v.Value)
			} else {
				s.Description = strings.Join(strings.Fields(v.Value), " ")
			}
		}
	}
	switch {
	case seen["name"] == 0:
		return bad(frontLine, "name: required")
	case len(s.Name) > MaxNameBytes || !nameRE.MatchString(s.Name):
		return bad(seen["name"], "name: %q must be 1 to %d lower-case letters, digits and single hyphens (pdf-forms)", s.Name, MaxNameBytes)
	case seen["description"] == 0:
		return bad(frontLine, "description: required (it tells the model when to load the skill)")
	case s.Description == "":
		return bad(seen["description"], "description: empty (it tells the model when to load the skill)")
	case len(s.Description) > MaxDescriptionBytes:
		return bad(seen["description"], "description: %d bytes, more than %d", len(s.Description), MaxDescriptionBytes)
	}
	return nil
}

// trimEOL removes a line's "\n" or "\r\n" and trailing blanks.
func trimEOL(line string) string {
	return strings.TrimRight(line, " \t\r\n")
}
