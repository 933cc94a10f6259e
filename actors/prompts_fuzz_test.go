package actors_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agcore/agcore/actors"
)

// FuzzPrompts_Add adds arbitrary template text to a registry holding a
// partial: Add either refuses it or registers it so that every template
// it names is there, and rendering it never panics.
func FuzzPrompts_Add(f *testing.F) {
	for _, seed := range []string{
		`{{template "hdr" .}} body`,
		`{{if .X}}{{template "nosuch" .}}{{else}}{{template "hdr" .}}{{end}}`,
		`{{range .Items}}{{template "hdr" .}}{{end}}{{with .Y}}{{template "z" .}}{{end}}`,
		`{{define "inner"}}{{template "inner2" .}}{{end}}{{define "inner2"}}x{{end}}{{template "inner" .}}`,
		`{{.Missing}}`,
		`{{`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p := actors.NewPrompts()
		if err := p.Add("hdr", "Header."); err != nil {
			t.Fatal(err)
		}
		err := p.Add("t", text)
		if err != nil {
			if errors.Is(err, actors.ErrUnknownPrompt) && !strings.Contains(err.Error(), `"`) {
				t.Errorf("an unknown template error that names none: %v", err)
			}
			return
		}
		_, err = p.Render("t", map[string]any{"X": true, "Items": []int{1}, "Y": 1})
		if errors.Is(err, actors.ErrUnknownPrompt) {
			t.Errorf("a registered template names an unknown one: %v", err)
		}
	})
}
