// Command loop is a WASM test tool that never returns: it spins until the
// host closes it.
package main

import (
	"fmt"
	"os"
)

const help = `agcore-tool: 1
name: loop
description: Spins forever.
permission: none
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--help" {
		fmt.Print(help)
		return
	}
	n := 0
	for {
		n++
	}
}
