package main

import (
	"fmt"
)

const hogHelp = `agcore-tool: 1
name: hog
description: Allocates memory until it is stopped.
permission: none
`

var kept [][]byte

// hog allocates memory without bound.
func hog(helpAsked bool) {
	if helpAsked {
		fmt.Print(hogHelp)
		return
	}
	for i := 0; ; i++ {
		b := make([]byte, 8<<20)
		b[0] = byte(i)
		kept = append(kept, b)
	}
}
