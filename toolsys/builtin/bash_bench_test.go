package builtin

import (
	"context"
	"os/exec"
	"testing"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/sandbox"
)

// BenchmarkBash measures a bash call that runs `true`, unconfined and
// confined, in the same run: confinement re-executes this binary, which
// applies the rules and then executes bash.
func BenchmarkBash(b *testing.B) {
	if st := sandbox.Probe(context.Background()); !st.Confined {
		b.Skipf("Landlock is unavailable here: %s", st)
	}
	trueExe, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true program")
	}
	ws, err := toolsys.NewWorkspace(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tc := &toolsys.Context{Workspace: ws}
	for _, bc := range []struct {
		name string
		sb   *sandbox.Sandbox
	}{
		// A helper that does not answer makes the sandbox unconfined;
		// Warn then runs bash directly.
		{"unconfined", sandbox.New(sandbox.Config{Mode: sandbox.Warn, Executable: trueExe})},
		{"confined", sandbox.New(sandbox.Config{})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bash := NewBash(Options{Sandbox: bc.sb}, nil)
			_ = bash.Description() // the probe, outside the measurement
			for b.Loop() {
				r, err := bash.Execute(context.Background(), BashParams{Command: "true"}, tc)
				if err != nil || r.IsError {
					b.Fatalf("%v %s", err, r.Content)
				}
			}
		})
	}
}
