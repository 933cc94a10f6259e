package sandbox_test

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// exitsWithin reports whether the process pid, which need not be ours,
// has exited (or is gone) within d. It waits on a pidfd, which becomes
// readable when the process exits: a process sent SIGKILL may still run
// for a moment before the signal takes it.
func exitsWithin(pid int, d time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		return unix.Kill(pid, 0) != nil
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0
	}
}
