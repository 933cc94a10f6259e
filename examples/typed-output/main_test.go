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
	for _, want := range []string{
		`"additionalProperties": false`,
		`sent back: the answer does not match the output schema: field "issued": must match the pattern`,
		`invoice 2026-0142 from Nordlicht Studio GmbH, issued 2026-03-14`,
		`total                    1500.00 EUR`,
		`(completed after 2 model calls)`,
		`issued 2026-03-14, model calls made: 0`,
		`error: the answer is not valid JSON`,
		`raw answer: This document is a lunch menu; it holds no invoice.`,
		`(completed after 1 model call)`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q\n%s", want, out.String())
		}
	}
}
