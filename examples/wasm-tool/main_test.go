package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the Go toolchain is not on PATH: the example cannot build its tool")
	}
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"== 2. built with GOOS=wasip1 GOARCH=wasm go build",
		"== 3. dropped into the watched folder: added wordcount (source wasm, permission read-only)",
		`"required": [`,
		"ok    notes.md: 3 lines, 15 words, 91 bytes; most frequent: tools (3), agcore (2), wasm (2)",
		"metadata: words=15 lines=3",
		"error cannot read ../../etc/hostname",
		`error invalid arguments for tool wordcount: field "top": expected integer, got string "two"`,
		`call:      wordcount {"path":"notes.md","top":1}`,
		"result:    notes.md: 3 lines, 15 words, 91 bytes; most frequent: tools (3)",
		"assistant: notes.md has 15 words",
		"== 6. removed from the folder: removed wordcount (still registered: false)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q\n%s", want, out.String())
		}
	}
}
