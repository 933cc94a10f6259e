// Command nohook uses a Sandbox without calling sandbox.Main, as a program
// that forgot the hook would. It prints the Sandbox's status; if it is ever
// started as a sandbox helper (re-executed with the helper's argument), it
// leaves a file named after itself, with ".started" added, behind.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/agcore/agcore/toolsys/sandbox"
)

func main() {
	if slices.Contains(os.Args[1:], "-test.run=^$") {
		if exe, err := os.Executable(); err == nil {
			_ = os.WriteFile(exe+".started", []byte("started as a helper\n"), 0o600)
		}
		os.Exit(1)
	}
	fmt.Println(sandbox.New(sandbox.Config{}).Status(context.Background()))
}
