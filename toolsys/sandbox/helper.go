package sandbox

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// Main turns the process into a sandbox helper when a Sandbox started it,
// and returns at once otherwise. A program that runs confined commands
// (the bash tool) must call it first thing in main, and a test binary
// first thing in TestMain:
//
//	func main() {
//		sandbox.Main()
//		...
//	}
//
// In a helper, Main never returns: it reads the command and its rules from
// the parent, applies them to itself with Landlock, and executes the
// command, which keeps the helper's process id (and process group). When
// the rules cannot be applied it reports why to the parent and exits.
//
// Main also records that this program calls it: a Sandbox that would
// re-execute this program (Config.Executable empty) and finds Main was not
// called reports commands as unconfined at once, and never starts the
// program, whose main might do anything with its arguments. A helper named
// by Config.Executable is probed by running it once (with the argument
// -test.run=^$, its output discarded, killed after Config.StartTimeout);
// one that does not answer is reported unconfined.
func Main() {
	if os.Getenv(helperEnv) != helperValue {
		mainCalled.Store(true)
		return
	}
	os.Exit(helper())
}

// mainCalled records that this process called Main. It is the one piece
// of package state: whether the program installed the hook is a fact about
// the process, not about any Sandbox.
var mainCalled atomic.Bool

// helper runs the helper side of the protocol and returns the exit code
// when it cannot execute the command.
func helper() int {
	status := os.NewFile(statusFD, "sandbox-status")
	in := os.NewFile(specFD, "sandbox-spec")
	sp, err := decodeSpec(in)
	_ = in.Close()
	if err == nil {
		err = confineAndExec(sp, status)
	}
	fmt.Fprintf(status, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	return 126
}
