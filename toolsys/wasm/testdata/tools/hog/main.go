// Command hog is a WASM test tool that allocates memory without bound.
package main

import (
	"fmt"
	"os"
)

const help = `agcore-tool: 1
name: hog
description: Allocates memory until it is stopped.
permission: none
`

var kept [][]byte

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--help" {
		fmt.Print(help)
		return
	}
	for i := 0; ; i++ {
		b := make([]byte, 8<<20)
		b[0] = byte(i)
		kept = append(kept, b)
	}
}
