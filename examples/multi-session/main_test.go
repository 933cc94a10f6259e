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
		"== 4 sessions, first turn, all at once",
		`[customer-1001]   -> order_status {"order":"1001"}`,
		"[customer-1003]   <- order 1003: delivered yesterday",
		"all 4 order_status calls were running at the same time",
		"[customer-1002] turn 1 completed: You're welcome!",
		"customer-1001  2      1",
		"6 messages  Your order 1001 is on its way, arriving Thursday.",
		"6 messages  Your order 1004 is waiting for payment.",
		"runtime total: 12 model calls",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q\n%s", want, out.String())
		}
	}
}
