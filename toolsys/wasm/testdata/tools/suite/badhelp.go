package main

import (
	"fmt"
)

// badhelpHelp breaks the convention on its fifth line: "float" is not a
// parameter type.
const badhelpHelp = `agcore-tool: 1
name: badhelp
description: Declares a parameter of an unknown type.
permission: none
param: --ratio float | a ratio
`

// badhelp is never registered: its help text does not parse.
func badhelp(helpAsked bool) {
	if helpAsked {
		fmt.Print(badhelpHelp)
		return
	}
	fmt.Println("never registered")
}
