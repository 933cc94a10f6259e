//go:build !linux

package memory

import "os"

// nextData returns off: without SEEK_DATA, every byte is read.
func nextData(_ *os.File, off int64) (int64, error) { return off, nil }
