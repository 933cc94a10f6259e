//go:build unix

package memory

import "golang.org/x/sys/unix"

// freeSpace returns the bytes available to this process on the file system
// of dir.
func freeSpace(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// spaceGuardSupported reports whether freeSpace works here.
const spaceGuardSupported = true
