package toolsys

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapOutput(t *testing.T) {
	big := strings.Repeat("a", DefaultOutputLimit+10)
	tests := []struct {
		name, in   string
		max        int
		wantPrefix string
		wantNote   bool
	}{
		{"under the limit", "hello", 10, "hello", false},
		{"at the limit", "0123456789", 10, "0123456789", false},
		{"over the limit", "0123456789abc", 10, "0123456789", true},
		{"zero means 64 KiB", big, 0, big[:DefaultOutputLimit], true},
		{"multi-byte boundary", strings.Repeat("中", 100), 50, strings.Repeat("中", 16), true},
		{"invalid UTF-8 is cut where it stands", strings.Repeat("\x80", 20), 10, strings.Repeat("\x80", 10), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CapOutput(tt.in, tt.max)
			if !tt.wantNote {
				if got != tt.in {
					t.Errorf("CapOutput changed %q to %q", tt.in, got)
				}
				return
			}
			note := "\n\n[... truncated, original size: " + strconv.Itoa(len(tt.in)) + " bytes ...]"
			if got != tt.wantPrefix+note {
				t.Errorf("CapOutput = %q, want %q", truncateRunes(got, 80), truncateRunes(tt.wantPrefix+note, 80))
			}
		})
	}
	han := CapOutput(strings.Repeat("中", 100), 50)
	if !strings.HasPrefix(han, "中") || !utf8.ValidString(han) {
		t.Errorf("capped Chinese text %q is not valid UTF-8 starting with 中", han)
	}
}
