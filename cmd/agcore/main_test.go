package main

import (
	"os"
	"testing"

	"github.com/agcore/agcore/toolsys/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main() // as main does: bash confines its commands through this binary
	if os.Getenv(chaosWorkerEnv) == "1" {
		// agcore chaos --kill-every re-executes this binary as its worker:
		// run the command line as the agcore binary would.
		os.Exit(runMain())
	}
	os.Exit(m.Run())
}
