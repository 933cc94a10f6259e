//go:build unix

package toolsys

import (
	"io/fs"
	"os"
	"syscall"
)

const (
	// readFlags open a file for reading without blocking on a named pipe
	// and without making a terminal the controlling one.
	readFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	// dirFlags open a directory, and refuse anything else at once.
	dirFlags = os.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NONBLOCK | syscall.O_NOCTTY
)

// linkCount returns the hard link count of fi, or 1 when it is unknown.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
