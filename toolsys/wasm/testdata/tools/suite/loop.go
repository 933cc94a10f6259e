package main

import (
	"fmt"
)

const loopHelp = `agcore-tool: 1
name: loop
description: Spins forever.
permission: none
`

// loop never returns: it spins until the host closes it.
func loop(helpAsked bool) {
	if helpAsked {
		fmt.Print(loopHelp)
		return
	}
	n := 0
	for {
		n++
	}
}
