package main

import (
	"flag"
	"fmt"
	"os"
	"unsafe"
)

const crashHelp = `agcore-tool: 1
name: crash
description: Fails in the way it is asked to.
permission: none
param: --how string required enum=panic enum=trap enum=exit | how to fail
`

// crash fails on purpose: a Go panic, a WebAssembly trap (an access beyond
// its linear memory) or a plain non-zero exit.
func crash(helpAsked bool) {
	if helpAsked {
		fmt.Print(crashHelp)
		return
	}
	fs := flag.NewFlagSet("crash", flag.ContinueOnError)
	how := fs.String("how", "", "")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	switch *how {
	case "panic":
		panic("crash asked to panic")
	case "trap":
		// An address far beyond the linear memory: the load traps.
		p := (*byte)(unsafe.Pointer(uintptr(0xfffffff0)))
		fmt.Println(*p)
	case "exit":
		fmt.Fprintln(os.Stderr, "crash: exiting with status 3")
		os.Exit(3)
	}
}
