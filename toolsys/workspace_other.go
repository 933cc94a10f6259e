//go:build !unix

package toolsys

import (
	"io/fs"
	"os"
)

const (
	// readFlags open a file for reading.
	readFlags = os.O_RDONLY
	// dirFlags open a directory for reading.
	dirFlags = os.O_RDONLY
)

// linkCount returns 1: link counts are not available from a FileInfo here.
func linkCount(fs.FileInfo) uint64 { return 1 }
