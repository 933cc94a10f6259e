//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
)

// confineAndExec cannot confine anything outside Linux.
func confineAndExec(spec, *os.File) error {
	_, err := hostABI()
	return err
}

// hostABI says that Landlock is Linux-only.
func hostABI() (int, error) {
	return 0, fmt.Errorf("Landlock is available on Linux only, not on %s", runtime.GOOS)
}
