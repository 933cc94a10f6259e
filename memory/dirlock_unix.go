//go:build unix

package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ownsDirLock reports whether Open locks the data directory itself (and so
// can clean up after an interrupted start before Badger opens it).
const ownsDirLock = true

// dirLock is the lock on a data directory. It is the lock Badger takes: an
// flock on the directory itself, exclusive for a writer and shared for
// readers, so agcore and any other Badger program exclude each other just as
// two Badger programs do. A writer also writes its pid to dir/LOCK.
type dirLock struct {
	f       *os.File
	pidFile string // "" for a reader
}

// lockDir locks dir for writing, or for reading when readOnly. It fails with
// a *LockedError when another process holds a conflicting lock.
func lockDir(dir string, readOnly bool) (*dirLock, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("memory: lock %s: %w", dir, err)
	}
	how := unix.LOCK_EX
	if readOnly {
		how = unix.LOCK_SH
	}
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &LockedError{Dir: dir, PID: readLockPID(dir)}
		}
		return nil, fmt.Errorf("memory: lock %s: %w", dir, err)
	}
	l := &dirLock{f: f}
	if !readOnly {
		l.pidFile = filepath.Join(dir, lockFileName)
		if err := os.WriteFile(l.pidFile, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o600); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("memory: lock %s: write pid file: %w", dir, err)
		}
	}
	return l, nil
}

// release removes a writer's pid file and unlocks the directory.
func (l *dirLock) release() error {
	if l == nil {
		return nil
	}
	var errs []error
	if l.pidFile != "" {
		if err := os.Remove(l.pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, unix.Flock(int(l.f.Fd()), unix.LOCK_UN), l.f.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("memory: unlock data directory: %w", err)
	}
	return nil
}
