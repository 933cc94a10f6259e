//go:build unix

package main

import "golang.org/x/sys/unix"

// terminalWidth returns the width in columns of the terminal open on fd,
// or zero when it cannot be read.
func terminalWidth(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
