// Command badhelp is a WASM test tool whose --help output breaks the
// convention on its fifth line: "float" is not a parameter type.
package main

import (
	"fmt"
	"os"
)

const help = `agcore-tool: 1
name: badhelp
description: Declares a parameter of an unknown type.
permission: none
param: --ratio float | a ratio
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--help" {
		fmt.Print(help)
		return
	}
	fmt.Println("never registered")
}
