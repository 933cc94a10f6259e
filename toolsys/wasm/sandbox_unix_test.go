//go:build unix

package wasm_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agcore/agcore/toolsys/wasm"
)

func TestSandbox_NamedPipeIsRefusedNotWaitedOn(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	tool := load(t, rt, "escape_write")
	ws := workspace(t)
	if err := syscall.Mkfifo(filepath.Join(ws.Root(), "fifo"), 0o600); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	// Without a writer, opening the pipe would block the tool until its
	// timeout; it is refused at once instead.
	report := escapeCall(t, tool, ws, `{"read":["fifo"],"write":["fifo"]}`)
	for _, key := range []string{"read fifo", "write fifo"} {
		if v, _ := report[key].(string); v == "" || strings.HasPrefix(v, "ok") {
			t.Errorf("%s = %q, want an error", key, v)
		}
	}
}
