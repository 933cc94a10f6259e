// Command agcore is the command-line interface of the agcore agent runtime.
//
// Run `agcore --help` for the commands, or `agcore demo` for an offline tour:
// a streamed conversation with parallel tool calls against the embedded mock
// LLM.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agcore/agcore/toolsys/sandbox"
)

func main() {
	// bash confines a command by re-executing this program, which becomes
	// the command here.
	sandbox.Main()
	os.Exit(runMain())
}

// runMain runs the command line with a context that SIGINT and SIGTERM
// cancel, and returns the exit code.
func runMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
}
