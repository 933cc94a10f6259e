package memory

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// nextData returns the offset of the first byte at or after off that is not
// in a hole of f, or -1 when only holes follow.
func nextData(f *os.File, off int64) (int64, error) {
	next, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
	switch {
	case errors.Is(err, unix.ENXIO):
		return -1, nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.EOPNOTSUPP):
		return off, nil // the file system cannot tell: read everything
	case err != nil:
		return 0, err
	}
	return next, nil
}
