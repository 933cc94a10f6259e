//go:build !unix

package memory

import "errors"

// freeSpace is not available without statfs; the guard is not installed.
func freeSpace(string) (int64, error) { return 0, errors.New("free space unknown on this platform") }

// spaceGuardSupported reports whether freeSpace works here.
const spaceGuardSupported = false
