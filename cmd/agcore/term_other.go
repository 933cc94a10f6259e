//go:build !unix

package main

// terminalWidth returns zero: the width is not read on this system.
func terminalWidth(uintptr) int { return 0 }
