package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrLocked is wrapped by the *LockedError Open returns when another process
// has the data directory open.
var ErrLocked = errors.New("memory: data directory in use")

// LockedError says that another process holds the data directory: a writer
// excludes every other opener, readers exclude writers.
type LockedError struct {
	Dir string
	// PID is the process id the writer recorded, 0 when unknown (the holder
	// is a reader, or its pid file is unreadable).
	PID int
}

// Error names the directory and, when known, the process.
func (e *LockedError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("memory: data directory %s is in use by another process (pid %d)", e.Dir, e.PID)
	}
	return fmt.Sprintf("memory: data directory %s is in use by another process", e.Dir)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// lockFileName is the pid file a writer keeps in the data directory, the one
// Badger writes.
const lockFileName = "LOCK"

// readLockPID returns the pid in dir's pid file, 0 when there is none.
func readLockPID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, lockFileName))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
