package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary play the child that run re-executes and
// kills, as the program itself does.
func TestMain(m *testing.M) {
	if isChild() {
		if err := child(context.Background(), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"acknowledged: turn 0 (charge-order-42) is journaled",
		"running: charge_card has written the charge",
		"SIGKILL sent to child",
		"turn 0 (charge-order-42) completed after the restart",
		"assistant: The charge for order 42 was interrupted",
		`user_message       turn 0 (charge-order-42): "Please charge my card for order 42."`,
		"tool_call_started  charge_card call_1_1",
		"activated          activation 2",
		"not idempotent, so it was not run again",
		"charged order 42: 1999 cents",
		"charge_card ran 1 time(s)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "user_message"); n != 1 {
		t.Errorf("the journal holds %d user messages, want 1", n)
	}
}
