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
		"step 0 completed (task agent's session): Belém Tower, the Jerónimos Monastery and São Jorge Castle.",
		"step 1 completed (sub-agent): Pastéis de Belém",
		"step 2 completed (sub-agent): Sunny, 24°C",
		"step 3 completed (task agent's session): Morning:",
		"1. [completed] Find a place to eat lunch near the sights. (after 0, independent)",
		"3. [completed] Write the day's itinerary. (after 0, 1, 2)",
		"== itinerary\nMorning: Belém Tower",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q\n%s", want, out.String())
		}
	}
	// Steps complete in plan order: 1 and 2 run together after 0, 3 last.
	if i, j := strings.Index(out.String(), "step 0 completed"), strings.Index(out.String(), "step 3 completed"); i > j {
		t.Errorf("step 3 completed before step 0\n%s", out.String())
	}
}
