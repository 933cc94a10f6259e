package skills

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	s, err := Parse("pdf/SKILL.md", []byte("\uFEFF---\r\nname: pdf-forms\r\ndescription: >\r\n  Fill PDF forms\r\n  and extract fields.\r\nlicense: MIT\r\n---\r\n\r\n# Filling forms\r\nUse the script.\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "pdf-forms" || s.Description != "Fill PDF forms and extract fields." {
		t.Errorf("name %q description %q", s.Name, s.Description)
	}
	if s.Body != "# Filling forms\nUse the script.\n" {
		t.Errorf("body %q", s.Body)
	}
}

func TestParse_Malformed(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int
		want     string
	}{
		{"no front matter", "# Title\n", 1, "must open with a front matter"},
		{"empty file", "", 1, "must open with a front matter"},
		{"unclosed", "---\nname: a\ndescription: b\n", 1, "never closed"},
		{"empty front", "---\n---\nbody", 2, "empty"},
		{"not a mapping", "---\n- a\n- b\n---\n", 2, "must be a mapping"},
		{"bad yaml", "---\nname: a\ndescription: [b\n---\n", 2, "did not find expected"},
		{"bad indentation", "---\nname: a\n  description: b\n---\n", 3, "mapping values are not allowed"},
		{"missing name", "---\ndescription: b\n---\n", 2, "name: required"},
		{"missing description", "---\nname: a\n---\n", 2, "description: required"},
		{"empty description", "---\nname: a\ndescription: \"  \"\n---\n", 3, "description: empty"},
		{"upper-case name", "---\ndescription: b\nname: PDF\n---\n", 3, `name: "PDF"`},
		{"name with a slash", "---\nname: a/b\ndescription: b\n---\n", 2, "lower-case letters"},
		{"long name", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: b\n---\n", 2, "name:"},
		{"list name", "---\nname: [a]\ndescription: b\n---\n", 2, "name: must be a string"},
		{"null description", "---\nname: a\ndescription:\n---\n", 3, "description: must be a string"},
		{"duplicate key", "---\nname: a\ndescription: b\nname: c\n---\n", 4, "given twice (first on line 2)"},
		{"long description", "---\nname: a\ndescription: " + strings.Repeat("x", MaxDescriptionBytes+1) + "\n---\n", 3, "more than 1024"},
		{"not UTF-8", "---\nname: a\xff\n---\n", 0, "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s/SKILL.md", []byte(tc.in))
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if pe.File != "s/SKILL.md" || pe.Line != tc.line || !strings.Contains(pe.Msg, tc.want) {
				t.Errorf("got %s (line %d), want line %d and %q", err, pe.Line, tc.line, tc.want)
			}
		})
	}
}

func TestParse_TooLarge(t *testing.T) {
	_, err := Parse("big/SKILL.md", make([]byte, MaxFileBytes+1))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: b\n---\nbody\n"))
	f.Add([]byte("---\r\nname: a\r\ndescription: >\r\n  b\r\n---\r\n"))
	f.Add([]byte("---\nname: &x a\ndescription: *x\n---\n"))
	f.Add([]byte("---\n- a\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f/SKILL.md", data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "f/SKILL.md" || pe.Line < 0 {
				t.Fatalf("err = %#v", err)
			}
			if pe.Line > strings.Count(string(data), "\n")+1 {
				t.Fatalf("line %d is past the end of the input: %v", pe.Line, err)
			}
			return
		}
		if !nameRE.MatchString(s.Name) || len(s.Name) > MaxNameBytes {
			t.Fatalf("accepted name %q", s.Name)
		}
		if s.Description == "" || strings.ContainsAny(s.Description, "\n\r") || len(s.Description) > MaxDescriptionBytes {
			t.Fatalf("accepted description %q", s.Description)
		}
	})
}
