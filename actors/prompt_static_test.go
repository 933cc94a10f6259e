package actors

import (
	"testing"
	"text/template"
)

// TestPromptTemplate_StaticOnlyWhenPlainText checks which templates are
// rendered once: plain text is (comments and definitions render nothing),
// and anything that reads data or calls a template is executed on every
// model call.
func TestPromptTemplate_StaticOnlyWhenPlainText(t *testing.T) {
	for _, tc := range []struct {
		text   string
		static bool
		want   string
	}{
		{"You are a helpful assistant.", true, "You are a helpful assistant."},
		{"", true, ""},
		{`{{define "x"}}partial{{end}}Plain.`, true, "Plain."},
		{"{{/* a comment */}}Plain.", true, "Plain."},
		{"Turn {{.Turn}}.", false, ""},
		{`{{template "x" .}}`, false, ""},
		{"{{if .Agent}}a{{end}}", false, ""},
	} {
		tmpl, err := template.New("t").Parse(tc.text)
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		pt := newPromptTemplate(tmpl)
		if pt.static != tc.static || pt.text != tc.want {
			t.Errorf("%q: static %v, text %q; want %v, %q", tc.text, pt.static, pt.text, tc.static, tc.want)
		}
	}
}
