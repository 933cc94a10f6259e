package wasm

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"

	"github.com/agcore/agcore/toolsys"
)

// rootFS is the file system a tool sees: the workspace, reached only
// through its *os.Root, so that no path, "..", absolute name or symbolic
// link (planted before the call or by the tool itself) leads outside it.
// wazero's own directory file system joins paths to a host directory and
// lets the host follow symbolic links wherever they point; this one asks
// the kernel to resolve every path beneath the root.
//
// Only regular files and directories are opened (never a named pipe, a
// socket or a device), and a regular file with more than one hard link is
// refused unless the policy allows it, as the workspace's file tools do.
// A read-only rootFS refuses every change with EROFS.
type rootFS struct {
	experimentalsys.UnimplementedFS

	root     *os.Root
	policy   toolsys.FilePolicy
	readOnly bool
}

var _ experimentalsys.FS = (*rootFS)(nil)

// name turns a path wazero passes (relative to the mount, already cleaned
// and checked by fs.ValidPath, maybe with a trailing slash) into a name
// for the root.
func name(p string) string {
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "."
	}
	return path.Clean(p)
}

// errno maps an error of the root to a WASI errno. An error that is not a
// system call's (os.Root's "path escapes from parent") is a refusal.
func errno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	e := experimentalsys.UnwrapOSError(err)
	if e == experimentalsys.EIO {
		var se syscall.Errno
		if !errors.As(err, &se) {
			return experimentalsys.EPERM
		}
	}
	return e
}

// writeFlags are the open flags that change a file.
const writeFlags = experimentalsys.O_WRONLY | experimentalsys.O_RDWR | experimentalsys.O_CREAT |
	experimentalsys.O_TRUNC | experimentalsys.O_APPEND

// OpenFile opens through the root. O_TRUNC is applied only after the open
// file has been checked, so that a refused file is never truncated.
func (r *rootFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if r.readOnly && flag&writeFlags != 0 {
		return nil, experimentalsys.EROFS
	}
	n := name(p)
	f, err := r.root.OpenFile(n, osFlags(flag&^experimentalsys.O_TRUNC), perm)
	if err != nil {
		return nil, errno(err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, errno(err)
	}
	if !fi.IsDir() {
		if flag&experimentalsys.O_DIRECTORY != 0 {
			_ = f.Close()
			return nil, experimentalsys.ENOTDIR
		}
		if r.policy.Check(n, fi) != nil {
			_ = f.Close()
			return nil, experimentalsys.EACCES
		}
		if flag&experimentalsys.O_TRUNC != 0 {
			if err := f.Truncate(0); err != nil {
				_ = f.Close()
				return nil, errno(err)
			}
		}
	}
	rf := &rootFile{f: f, dir: fi.IsDir(), append: flag&experimentalsys.O_APPEND != 0}
	rf.seeker = seeker[int64]{rf}
	return rf, 0
}

// osFlags maps WASI open flags to os flags; the platform's own (no
// controlling terminal, no blocking open of a named pipe, directory only,
// no following of a final symbolic link, synchronous writes) are added
// where it has them.
func osFlags(flag experimentalsys.Oflag) int {
	var out int
	switch flag & (experimentalsys.O_RDONLY | experimentalsys.O_RDWR | experimentalsys.O_WRONLY) {
	case experimentalsys.O_RDWR:
		out = os.O_RDWR
	case experimentalsys.O_WRONLY:
		out = os.O_WRONLY
	default:
		out = os.O_RDONLY
	}
	for f, o := range map[experimentalsys.Oflag]int{
		experimentalsys.O_APPEND: os.O_APPEND, experimentalsys.O_CREAT: os.O_CREATE,
		experimentalsys.O_EXCL: os.O_EXCL, experimentalsys.O_SYNC: os.O_SYNC, experimentalsys.O_TRUNC: os.O_TRUNC,
	} {
		if flag&f != 0 {
			out |= o
		}
	}
	return out | platformFlags(flag)
}

// Lstat stats without following a final symbolic link.
func (r *rootFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := r.root.Lstat(name(p))
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Stat stats, following symbolic links inside the root.
func (r *rootFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := r.root.Stat(name(p))
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Readlink reads a link's target as it is written.
func (r *rootFS) Readlink(p string) (string, experimentalsys.Errno) {
	dst, err := r.root.Readlink(name(p))
	if err != nil {
		return "", errno(err)
	}
	return dst, 0
}

// Mkdir makes a directory.
func (r *rootFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return errno(r.root.Mkdir(name(p), perm))
}

// Chmod changes a file's mode.
func (r *rootFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return errno(r.root.Chmod(name(p), perm))
}

// Rename renames within the root.
func (r *rootFS) Rename(from, to string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return errno(r.root.Rename(name(from), name(to)))
}

// Rmdir removes an empty directory, and nothing else.
func (r *rootFS) Rmdir(p string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	n := name(p)
	fi, err := r.root.Lstat(n)
	if err != nil {
		return errno(err)
	}
	if !fi.IsDir() {
		return experimentalsys.ENOTDIR
	}
	return errno(r.root.Remove(n))
}

// Unlink removes a name that is not a directory.
func (r *rootFS) Unlink(p string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	n := name(p)
	fi, err := r.root.Lstat(n)
	if err != nil {
		return errno(err)
	}
	if fi.IsDir() {
		return experimentalsys.EISDIR
	}
	return errno(r.root.Remove(n))
}

// Link makes a hard link; both names are inside the root.
func (r *rootFS) Link(oldPath, newPath string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return errno(r.root.Link(name(oldPath), name(newPath)))
}

// Symlink plants a symbolic link. Its target is kept as written (an
// absolute one is refused, as WASI asks): following it later goes through
// the root, which refuses a target outside.
func (r *rootFS) Symlink(oldPath, linkName string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	if path.IsAbs(oldPath) {
		return experimentalsys.EPERM
	}
	return errno(r.root.Symlink(oldPath, name(linkName)))
}

// Utimens sets the access and modification times, keeping a time given
// as UTIME_OMIT.
func (r *rootFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	n := name(p)
	fi, err := r.root.Stat(n)
	if err != nil {
		return errno(err)
	}
	st := sys.NewStat_t(fi)
	return errno(r.root.Chtimes(n, utime(atim, st.Atim), utime(mtim, st.Mtim)))
}

// utime is t, or current when t is UTIME_OMIT.
func utime(t, current int64) time.Time {
	if t == experimentalsys.UTIME_OMIT {
		t = current
	}
	return time.Unix(0, t)
}

// rootFile is a file or directory opened through a rootFS.
type rootFile struct {
	seeker[int64]
	f      *os.File
	dir    bool
	append bool
	closed bool
}

var _ experimentalsys.File = (*rootFile)(nil)

func (f *rootFile) stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	fi, err := f.f.Stat()
	if err != nil {
		return sys.Stat_t{}, errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Dev returns the device of the file.
func (f *rootFile) Dev() (uint64, experimentalsys.Errno) {
	st, e := f.stat()
	return st.Dev, e
}

// Ino returns the inode of the file.
func (f *rootFile) Ino() (sys.Inode, experimentalsys.Errno) {
	st, e := f.stat()
	return st.Ino, e
}

// IsDir reports whether the file is a directory.
func (f *rootFile) IsDir() (bool, experimentalsys.Errno) {
	if f.closed {
		return false, experimentalsys.EBADF
	}
	return f.dir, 0
}

// IsAppend reports whether writes append.
func (f *rootFile) IsAppend() bool { return f.append }

// SetAppend is not supported: the file would have to be opened again by
// its name, which may by then name another file.
func (f *rootFile) SetAppend(enable bool) experimentalsys.Errno {
	if f.dir {
		return experimentalsys.EISDIR
	}
	if enable == f.append {
		return 0
	}
	return experimentalsys.ENOSYS
}

// Stat returns the file's status.
func (f *rootFile) Stat() (sys.Stat_t, experimentalsys.Errno) { return f.stat() }

// Read reads at the current offset.
func (f *rootFile) Read(buf []byte) (int, experimentalsys.Errno) {
	if f.dir {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.Read(buf)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, errno(err)
}

// Pread reads at off.
func (f *rootFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.dir {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.ReadAt(buf, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, errno(err)
}

// seek moves the offset; on a directory, only back to the start, which
// rewinds the listing. It is the WASI Seek (see seeker).
func (f *rootFile) seek(offset int64, whence int) (int64, experimentalsys.Errno) {
	if f.closed {
		return 0, experimentalsys.EBADF
	}
	if whence > io.SeekEnd || whence < io.SeekStart {
		return 0, experimentalsys.EINVAL
	}
	if f.dir && (offset != 0 || whence != io.SeekStart) {
		return 0, experimentalsys.EISDIR
	}
	n, err := f.f.Seek(offset, whence)
	return n, errno(err)
}

// seeker gives rootFile the WASI Seek method, which returns an Errno where
// io.Seeker returns an error. It is generic only because go vet's
// stdmethods check wants every method named Seek to have io.Seeker's
// signature, and skips a generic one; it is always seeker[int64].
type seeker[O ~int64] struct{ f *rootFile }

// Seek implements experimentalsys.File.
func (s seeker[O]) Seek(offset O, whence int) (O, experimentalsys.Errno) {
	n, e := s.f.seek(int64(offset), whence)
	return O(n), e
}

// Readdir returns up to n more entries (all of them when n < 0), none at
// the end.
func (f *rootFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed {
		return nil, experimentalsys.EBADF
	}
	if !f.dir {
		return nil, experimentalsys.EBADF
	}
	if n == 0 {
		return nil, 0
	}
	entries, err := f.f.ReadDir(n)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, errno(err)
	}
	out := make([]experimentalsys.Dirent, 0, len(entries))
	for _, e := range entries {
		d := experimentalsys.Dirent{Name: e.Name(), Type: e.Type()}
		if fi, err := e.Info(); err == nil {
			d.Ino = sys.NewStat_t(fi).Ino
		}
		out = append(out, d)
	}
	return out, 0
}

// Write writes at the current offset (at the end when appending).
func (f *rootFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if f.dir {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.Write(buf)
	return n, errno(err)
}

// Pwrite writes at off.
func (f *rootFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.dir {
		return 0, experimentalsys.EISDIR
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.WriteAt(buf, off)
	return n, errno(err)
}

// Truncate changes the file's size.
func (f *rootFile) Truncate(size int64) experimentalsys.Errno {
	if f.dir {
		return experimentalsys.EISDIR
	}
	if size < 0 {
		return experimentalsys.EINVAL
	}
	return errno(f.f.Truncate(size))
}

// Sync flushes the file to storage.
func (f *rootFile) Sync() experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	return errno(f.f.Sync())
}

// Datasync flushes the file to storage.
func (f *rootFile) Datasync() experimentalsys.Errno { return f.Sync() }

// Utimens is not supported on an open file: os.File cannot set the times
// of its descriptor.
func (f *rootFile) Utimens(int64, int64) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	return experimentalsys.ENOSYS
}

// Close closes the file; closing twice is harmless.
func (f *rootFile) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return errno(f.f.Close())
}
