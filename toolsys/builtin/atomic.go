package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// newFileMode is the mode of a file write_file creates.
const newFileMode fs.FileMode = 0o644

// writeAtomic replaces the file at path with data: it writes a temporary file
// in the same directory, syncs it, gives it mode and renames it over path, so
// a reader sees either the old content or the new, never a mix. The parent
// directory must exist.
func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable where the platform allows it; a
// failure only weakens durability, so it is ignored.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// existingMode returns the permission bits of the regular file at path and
// whether it exists. A directory at path is an error.
func existingMode(path string) (fs.FileMode, bool, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newFileMode, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if st.IsDir() {
		return 0, true, errIsDir
	}
	return st.Mode().Perm(), true, nil
}

// errIsDir says a file tool was pointed at a directory.
var errIsDir = errors.New("is a directory")
