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
		`"required": [`,
		`ok    120.00 EUR = 130.80 USD`,
		`field "amount": expected number, got string "120"`,
		`field "to": must be one of ["EUR","GBP","USD"], got "YEN"`,
		`field "to": is required but missing`,
		`unknown field "fee"`,
		`from and to are both EUR`,
		`call:      convert {"amount":120,"from":"EUR","to":"DOLLARS"}`,
		`result:    120.00 EUR = 130.80 USD`,
		`assistant: 120 euros are 130.80 US dollars`,
		`(completed after 3 model calls)`,
		`8 calls, 6 errors`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q\n%s", want, out.String())
		}
	}
}
