package sandbox_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/agcore/agcore/toolsys/sandbox"
)

// opEnv makes the test binary, run inside a sandbox by a test, try one
// network operation with raw system calls and print its outcome.
const opEnv = "SANDBOX_TEST_OP"

func TestMain(m *testing.M) {
	sandbox.Main()
	if op := os.Getenv(opEnv); op != "" {
		fmt.Println(netOp(op))
		os.Exit(0)
	}
	os.Exit(m.Run())
}
