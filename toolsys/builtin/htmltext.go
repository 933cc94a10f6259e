package builtin

import (
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToText renders an HTML document as readable plain text: scripts,
// styles and other non-content elements dropped; headings as "# ", "## "...;
// paragraphs separated by blank lines; list items as "- " or "1. ", indented
// by depth; table cells separated by " | "; preformatted text kept verbatim;
// links as "text (url)" with url resolved against base; images as their alt
// text in brackets. The document's title, when present, comes first.
func htmlToText(r io.Reader, base *url.URL) (string, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", fmt.Errorf("parse html: %w", err)
	}
	tr := &textRenderer{base: base}
	tr.node(doc)
	return tr.finish(), nil
}

// textRenderer accumulates the text of an HTML tree. Breaks and spaces are
// kept pending and written only before the next text, so runs of
// whitespace and empty blocks collapse.
type textRenderer struct {
	b     strings.Builder
	base  *url.URL
	title string
	pre   int        // depth of <pre> elements
	lists []listKind // open lists, innermost last
	nl    int        // line breaks pending (at most 2: one blank line)
	space bool       // a space pending
}

// listKind is an open list and its item counter.
type listKind struct {
	ordered bool
	n       int
}

// skipped reports whether an element's content is not text for a reader.
func skipped(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math, atom.Iframe,
		atom.Object, atom.Embed, atom.Canvas, atom.Select, atom.Button:
		return true
	}
	return false
}

// blockBreaks returns the line breaks around a block element (2 = a blank
// line), or 0 for an element that is not a block.
func blockBreaks(a atom.Atom) int {
	switch a {
	case atom.P, atom.Blockquote, atom.Table, atom.Figure, atom.Dl, atom.Form:
		return 2
	case atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Main, atom.Nav, atom.Aside,
		atom.Details, atom.Summary, atom.Fieldset, atom.Address, atom.Dt, atom.Dd, atom.Caption,
		atom.Figcaption, atom.Tr:
		return 1
	}
	return 0
}

// headingLevel returns 1 to 6 for h1 to h6, else 0.
func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// breakLines asks for n line breaks before the next text.
func (r *textRenderer) breakLines(n int) {
	r.nl = max(r.nl, min(n, 2))
	r.space = false
}

// write writes s after the pending breaks or space.
func (r *textRenderer) write(s string) {
	if s == "" {
		return
	}
	if r.b.Len() > 0 {
		if r.nl > 0 {
			r.b.WriteString(strings.Repeat("\n", r.nl))
		} else if r.space {
			r.b.WriteByte(' ')
		}
	}
	r.nl, r.space = 0, false
	r.b.WriteString(s)
}

// text writes a text node: verbatim inside <pre>, otherwise with its
// whitespace collapsed.
func (r *textRenderer) text(s string) {
	if r.pre > 0 {
		r.write(s)
		return
	}
	words := strings.Fields(s)
	if len(words) == 0 {
		if s != "" && r.nl == 0 {
			r.space = true
		}
		return
	}
	if isSpace(s[0]) && r.nl == 0 {
		r.space = true
	}
	for i, w := range words {
		if i > 0 {
			r.space = true
		}
		r.write(w)
	}
	if isSpace(s[len(s)-1]) {
		r.space = true
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// node renders n and its children.
func (r *textRenderer) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		r.text(n.Data)
		return
	case html.ElementNode:
	case html.DocumentNode:
		r.children(n)
		return
	default:
		return // comments, doctypes
	}
	a := n.DataAtom
	switch {
	case skipped(a):
		return
	case a == atom.Title:
		if r.title == "" {
			r.title = strings.Join(strings.Fields(textContent(n)), " ")
		}
		return
	case headingLevel(a) > 0:
		r.breakLines(2)
		r.write(strings.Repeat("#", headingLevel(a)) + " ")
		r.children(n)
		r.breakLines(2)
	case a == atom.Ul || a == atom.Ol:
		gap := 2
		if len(r.lists) > 0 {
			gap = 1
		}
		r.breakLines(gap)
		r.lists = append(r.lists, listKind{ordered: a == atom.Ol})
		r.children(n)
		r.lists = r.lists[:len(r.lists)-1]
		r.breakLines(gap)
	case a == atom.Li:
		r.breakLines(1)
		marker := "- "
		depth := 0
		if len(r.lists) > 0 {
			l := &r.lists[len(r.lists)-1]
			l.n++
			if l.ordered {
				marker = fmt.Sprintf("%d. ", l.n)
			}
			depth = len(r.lists) - 1
		}
		r.write(strings.Repeat("  ", depth) + marker)
		r.children(n)
		r.breakLines(1)
	case a == atom.Td || a == atom.Th:
		if hasElementBefore(n) {
			r.space = false
			r.write(" |")
			r.space = true
		}
		r.children(n)
	case a == atom.Pre:
		r.breakLines(2)
		r.pre++
		r.children(n)
		r.pre--
		r.breakLines(2)
	case a == atom.Br:
		if r.b.Len() > 0 {
			r.nl = min(r.nl+1, 2)
			r.space = false
		}
	case a == atom.Hr:
		r.breakLines(1)
		r.write("---")
		r.breakLines(1)
	case a == atom.A:
		r.link(n)
	case a == atom.Img:
		if alt := strings.Join(strings.Fields(attr(n, "alt")), " "); alt != "" {
			r.write("[" + alt + "]")
		}
	case blockBreaks(a) > 0:
		r.breakLines(blockBreaks(a))
		r.children(n)
		r.breakLines(blockBreaks(a))
	default:
		r.children(n)
	}
}

// children renders n's children in order.
func (r *textRenderer) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.node(c)
	}
}

// link renders an anchor as "text (url)", or the url alone when the anchor
// has no text or its text is the url.
func (r *textRenderer) link(n *html.Node) {
	start := r.b.Len()
	r.children(n)
	target := r.resolve(attr(n, "href"))
	if target == "" {
		return
	}
	text := strings.TrimSpace(r.b.String()[start:])
	switch {
	case text == "":
		r.write(target)
	case text != target:
		r.b.WriteString(" (" + target + ")")
	}
}

// resolve returns href as an absolute URL, or "" for fragments, scripts and
// unparsable references.
func (r *textRenderer) resolve(href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if r.base != nil {
		u = r.base.ResolveReference(u)
	}
	switch strings.ToLower(u.Scheme) {
	case "javascript", "data", "vbscript":
		return ""
	}
	return u.String()
}

// finish returns the text: title first, no trailing spaces, at most one
// blank line in a row, valid UTF-8.
func (r *textRenderer) finish() string {
	body := r.b.String()
	if r.title != "" && !strings.HasPrefix(strings.TrimLeft(body, "# "), r.title) {
		body = "Title: " + r.title + "\n\n" + body
	}
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r\f")
	}
	body = strings.Join(lines, "\n")
	body = blankRuns.ReplaceAllString(body, "\n\n")
	return strings.ToValidUTF8(strings.TrimSpace(body), "\uFFFD")
}

// blankRuns matches two or more blank lines.
var blankRuns = regexp.MustCompile(`\n{3,}`)

// attr returns n's attribute key, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val
		}
	}
	return ""
}

// textContent returns the concatenated text below n.
func textContent(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// hasElementBefore reports whether an element precedes n among its siblings.
func hasElementBefore(n *html.Node) bool {
	for c := n.PrevSibling; c != nil; c = c.PrevSibling {
		if c.Type == html.ElementNode {
			return true
		}
	}
	return false
}
