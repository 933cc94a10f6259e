package builtin

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestHTMLToText(t *testing.T) {
	base, _ := url.Parse("https://example.com/dir/page.html")
	tests := []struct {
		name, in, want string
	}{
		{name: "scripts and styles dropped",
			in:   `<html><head><style>p{}</style><script>var x=1</script></head><body><p>Hi</p><noscript>enable js</noscript></body></html>`,
			want: "Hi"},
		{name: "headings and paragraphs",
			in:   "<h1>Title</h1><p>First\n   paragraph.</p><p>Second.</p><h3>Sub</h3>text",
			want: "# Title\n\nFirst paragraph.\n\nSecond.\n\n### Sub\n\ntext"},
		{name: "lists nested and ordered",
			in:   "<ul><li>a<ul><li>a1</li></ul></li><li>b</li></ul><ol><li>x</li><li>y</li></ol>",
			want: "- a\n  - a1\n- b\n\n1. x\n2. y"},
		{name: "links resolved",
			in:   `<p>See <a href="other.html">other</a>, <a href="https://x.org">https://x.org</a>, <a href="/abs"></a> and <a href="#top">top</a>.</p>`,
			want: "See other (https://example.com/dir/other.html), https://x.org, https://example.com/abs and top."},
		{name: "javascript links dropped", in: `<a href="javascript:void(0)">click</a>`, want: "click"},
		{name: "pre kept verbatim", in: "<p>code:</p><pre>a  b\n  c</pre><p>after</p>", want: "code:\n\na  b\n  c\n\nafter"},
		{name: "inline elements join", in: "<p>foo<b>bar</b> <i>baz</i></p>", want: "foobar baz"},
		{name: "line breaks", in: "a<br>b<br><br>c", want: "a\nb\n\nc"},
		{name: "table", in: "<table><tr><th>h1</th><th>h2</th></tr><tr><td>1</td><td>2</td></tr></table>", want: "h1 | h2\n1 | 2"},
		{name: "image alt", in: `<p>logo: <img src="x.png" alt="Company  logo"></p>`, want: "logo: [Company logo]"},
		{name: "title first unless it heads the body", in: "<title>Doc</title><h1>Doc</h1><p>x</p>", want: "# Doc\n\nx"},
		{name: "title", in: "<title> My  Page </title><p>x</p>", want: "Title: My Page\n\nx"},
		{name: "empty", in: "", want: ""},
		{name: "blank lines collapse", in: "<div><div><p>a</p></div></div><div></div><p></p><p>b</p>", want: "a\n\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := htmlToText(strings.NewReader(tt.in), base)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzHTMLToText(f *testing.F) {
	f.Add("<p>a <a href='/x'>b</a></p>")
	f.Add("<ul><li><ol><li>x</ol></ul><pre>\n\n\n</pre>")
	f.Add("<table><td>1<td>2<tr><th>3</table>")
	base, _ := url.Parse("https://example.com/")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := htmlToText(strings.NewReader(in), base)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		if strings.Contains(got, "\n\n\n") {
			t.Fatalf("more than one blank line in a row: %q", got)
		}
		if got != strings.TrimSpace(got) {
			t.Fatalf("surrounding space: %q", got)
		}
		for _, l := range strings.Split(got, "\n") {
			if l != strings.TrimRight(l, " \t") {
				t.Fatalf("trailing space in %q", l)
			}
		}
	})
}
