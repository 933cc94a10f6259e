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
		"== service listening on http://127.0.0.1:",
		"< 200 OK text/event-stream",
		"< event turn_started   turn 0",
		`< event tool_started   stock_level {"sku":"A-100"}`,
		"< event tool_finished  stock_level -> 42 units of A-100",
		`< event turn_ended     completed: "There are 42 units of A-100 in stock."`,
		`< 200 OK {"session": "shop-1", "turn": 1, "outcome": "completed", "text": "Hello! Ask me about stock levels."`,
		`"next_turn": 2, "running": false, "messages": 6`,
		`< 400 Bad Request {"error": "malformed body: json: unknown field \"txt\""}`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "< event text_delta"); n < 2 {
		t.Errorf("%d text_delta events, want the reply streamed in pieces", n)
	}
}
