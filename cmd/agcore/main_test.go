package main

import (
	"os"
	"testing"

	"github.com/agcore/agcore/toolsys/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main() // as main does: bash confines its commands through this binary
	os.Exit(m.Run())
}
