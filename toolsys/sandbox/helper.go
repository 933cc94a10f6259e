package sandbox

import (
	"fmt"
	"os"
	"strings"
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
// A Sandbox whose program does not call Main notices it (the helper does
// not answer) and reports commands as unconfined; to find out, it runs the
// program once with the argument -test.run=^$ and its output discarded,
// and kills it after Config.StartTimeout.
func Main() {
	if os.Getenv(helperEnv) != helperValue {
		return
	}
	os.Exit(helper())
}

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
