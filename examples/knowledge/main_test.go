package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"== 4 pages written; querying the index",
		`"how long does shipping take?" (keywords `,
		"  Shipping times",
		"  Returns and refunds",
		`call:      retrieve {"query":"refund card business days","limit":2}`,
		"  ## Returns and refunds",
		"assistant: You can return the blender within 30 days",
		"== the knowledge layer of the first system prompt\n  <knowledge>\n  ## Returns and refunds",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q\n%s", want, got)
		}
	}
	// The best match of each direct query comes first.
	if i, j := strings.Index(got, `"how long does shipping take?"`), strings.Index(got, "Shipping times"); j < i {
		t.Errorf("shipping query: Shipping times not listed under it\n%s", got)
	}
}
