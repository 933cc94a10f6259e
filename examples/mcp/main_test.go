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
		"== connection actor mcp/weather: ready, 1 tool(s)",
		"mcp__weather__forecast (read-only): Returns the weather forecast for a city.",
		`"required":["city"]`,
		`error result: true invalid arguments for tool mcp__weather__forecast: field "city": expected string, got number 42`,
		"calls the server received: 0",
		`call:      mcp__weather__forecast {"city":"Oslo","days":2}`,
		"result:    Oslo, next 2 day(s): clear sky",
		"assistant: Oslo will be clear and mild",
		"calls the server received: 1",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q\n%s", want, out.String())
		}
	}
}
