package toolsys

import (
	"fmt"
	"unicode/utf8"
)

// DefaultOutputLimit is the output cap used when none is configured: 64 KiB.
const DefaultOutputLimit = 64 << 10

// CapOutput returns s unchanged when it is at most max bytes long. Otherwise
// it cuts s at the largest UTF-8 character boundary not beyond max bytes and
// appends a note of the original size:
//
//	"\n\n[... truncated, original size: N bytes ...]"
//
// max <= 0 means DefaultOutputLimit.
func CapOutput(s string, max int) string {
	if max <= 0 {
		max = DefaultOutputLimit
	}
	if len(s) <= max {
		return s
	}
	cut := max
	// Step back over at most UTFMax-1 continuation bytes; further back the
	// input is not valid UTF-8 anyway and is cut where it stands.
	for back := 0; back < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); back++ {
		cut--
	}
	if !utf8.RuneStart(s[cut]) {
		cut = max
	}
	return s[:cut] + fmt.Sprintf("\n\n[... truncated, original size: %d bytes ...]", len(s))
}
