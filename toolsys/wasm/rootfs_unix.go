//go:build unix

package wasm

import (
	"syscall"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// platformFlags adds the Unix open flags: never block on opening a named
// pipe nor take a terminal as the controlling one, and pass on the WASI
// flags os has no name for.
func platformFlags(flag experimentalsys.Oflag) int {
	out := syscall.O_NONBLOCK | syscall.O_NOCTTY
	if flag&experimentalsys.O_DIRECTORY != 0 {
		out |= syscall.O_DIRECTORY
	}
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		out |= syscall.O_NOFOLLOW
	}
	if flag&experimentalsys.O_DSYNC != 0 {
		out |= syscall.O_DSYNC
	}
	return out
}
