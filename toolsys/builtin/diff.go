package builtin

import (
	"fmt"
	"strings"
)

// maxDiffLines caps the diff summary edit_file returns.
const maxDiffLines = 60

// span is a replacement in byte offsets of the old content: old[start:end]
// becomes repl. Spans are sorted and do not overlap.
type span struct {
	start, end int
	repl       string
}

// hunk is one changed run of lines: old lines starting at oldStart (1-based)
// replaced by new lines starting at newStart. Lines keep their endings.
type hunk struct {
	oldStart, newStart int
	old, new           []string
}

// applySpans returns content with spans applied and the changed lines as
// hunks. Each span is widened to whole lines, overlapping or touching
// regions are merged, and lines a region leaves unchanged at its start or end
// are trimmed, so the hunks hold exactly the changed lines.
func applySpans(content string, spans []span) (string, []hunk) {
	var out strings.Builder
	out.Grow(len(content))
	var hunks []hunk
	pos := 0       // next byte of content not yet copied
	line := 1      // line number of content[pos] in the old content
	lineDelta := 0 // new line number minus old line number at pos
	for i := 0; i < len(spans); {
		// Widen to whole lines and merge the spans that touch the region.
		ls := lineStart(content, spans[i].start)
		le := lineEnd(content, spans[i].end)
		j := i + 1
		for j < len(spans) && lineStart(content, spans[j].start) <= le {
			le = max(le, lineEnd(content, spans[j].end))
			j++
		}
		out.WriteString(content[pos:ls])
		line += strings.Count(content[pos:ls], "\n")
		var region strings.Builder
		at := ls
		for _, s := range spans[i:j] {
			region.WriteString(content[at:s.start])
			region.WriteString(s.repl)
			at = s.end
		}
		region.WriteString(content[at:le])
		newText := region.String()
		out.WriteString(newText)

		old, nw := splitLinesKeep(content[ls:le]), splitLinesKeep(newText)
		h := hunk{oldStart: line, newStart: line + lineDelta, old: old, new: nw}
		for len(h.old) > 0 && len(h.new) > 0 && h.old[0] == h.new[0] {
			h.old, h.new = h.old[1:], h.new[1:]
			h.oldStart++
			h.newStart++
		}
		for len(h.old) > 0 && len(h.new) > 0 && h.old[len(h.old)-1] == h.new[len(h.new)-1] {
			h.old, h.new = h.old[:len(h.old)-1], h.new[:len(h.new)-1]
		}
		if len(h.old) > 0 || len(h.new) > 0 {
			hunks = append(hunks, h)
		}
		line += strings.Count(content[ls:le], "\n")
		lineDelta += strings.Count(newText, "\n") - strings.Count(content[ls:le], "\n")
		pos = le
		i = j
	}
	out.WriteString(content[pos:])
	return out.String(), hunks
}

// lineStart returns the offset of the start of the line holding offset i.
func lineStart(s string, i int) int {
	return strings.LastIndexByte(s[:i], '\n') + 1
}

// lineEnd returns the offset just past the line ending of the line holding
// offset i, or len(s).
func lineEnd(s string, i int) int {
	if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
		return i + k + 1
	}
	return len(s)
}

// splitLinesKeep splits s after every "\n", keeping the endings; a last line
// without one is kept too. An empty s has no lines.
func splitLinesKeep(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffStats counts the lines the hunks add and remove.
func diffStats(hunks []hunk) (added, removed int) {
	for _, h := range hunks {
		added += len(h.new)
		removed += len(h.old)
	}
	return added, removed
}

// renderHunks writes the hunks as a unified-diff-like summary, at most
// maxDiffLines lines of it.
func renderHunks(hunks []hunk) string {
	var b strings.Builder
	n, omitted := 0, 0
	emit := func(s string) {
		if n < maxDiffLines {
			b.WriteString(s)
			b.WriteByte('\n')
			n++
		} else {
			omitted++
		}
	}
	for _, h := range hunks {
		emit(fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.oldStart, len(h.old), h.newStart, len(h.new)))
		for _, l := range h.old {
			emit("-" + displayLine(l))
		}
		for _, l := range h.new {
			emit("+" + displayLine(l))
		}
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "[%d more diff lines]\n", omitted)
	}
	return b.String()
}

// displayLine strips a line's ending and marks a missing one.
func displayLine(l string) string {
	if t, ok := strings.CutSuffix(l, "\n"); ok {
		return strings.TrimSuffix(t, "\r")
	}
	return l + " (no newline at end)"
}
