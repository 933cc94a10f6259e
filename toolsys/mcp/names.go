package mcp

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// maxToolName is the longest tool name LLM APIs accept.
const maxToolName = 64

// ToolName returns the registry name of a server's tool:
// mcp__<server>__<tool>, where every character of tool outside
// [a-zA-Z0-9_-] becomes '_'. A name longer than 64 characters, or one that
// had to be changed, ends with 8 hex digits of a hash of the original tool
// name, so that distinct remote names stay distinct.
func ToolName(server, tool string) string {
	prefix := "mcp__" + server + "__"
	clean := sanitize(tool)
	name := prefix + clean
	if clean == tool && len(name) <= maxToolName && tool != "" {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(tool))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	room := max(maxToolName-len(prefix)-len(suffix), 0)
	if len(clean) > room {
		clean = clean[:room]
	}
	return prefix + clean + suffix
}

// sanitize replaces every byte outside [a-zA-Z0-9_-] with '_'. A multi-byte
// UTF-8 character becomes one '_'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
