package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// verifyTables verifies every table the MANIFEST of dir lists, returning the
// first damaged one as a *FileError (see checkTables). Badger verifies
// blocks as it reads them, but a read that fails its check looks to the
// reader like a missing key, and a table whose footer is damaged panics in
// one of Badger's own goroutines, out of reach of recover: checking the
// tables first turns both into an error of Open.
func verifyTables(dir string, bo badger.Options) error {
	problems, err := checkTables(dir, bo, true)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return problems[0]
	}
	return nil
}

// checkTables verifies the tables the MANIFEST lists: each must exist and
// match every checksum it holds (index and blocks). It stops at the first
// damaged table when first is set. Tables the MANIFEST does not list are
// leftovers of an interrupted compaction that Badger deletes; they are not
// checked. A missing MANIFEST (a new store) lists nothing.
func checkTables(dir string, bo badger.Options, first bool) ([]*FileError, error) {
	path := filepath.Join(dir, manifestName)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, _, err := replayManifest(f, bo)
	_ = f.Close()
	if err != nil {
		return []*FileError{{File: path, Err: err}}, nil
	}
	ids := make([]uint64, 0, len(m.Tables))
	for id := range m.Tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var problems []*FileError
	for _, id := range ids {
		tm := m.Tables[id]
		if tm.KeyID != 0 {
			continue // encrypted: agcore never writes these, Badger checks them
		}
		name := table.NewFilename(id, dir)
		if err := verifyTable(name, tm.Compression, bo.BlockSize); err != nil {
			problems = append(problems, &FileError{File: name, Err: err})
			if first {
				break
			}
		}
	}
	return problems, nil
}

// replayManifest reads the MANIFEST, turning a panic into an error.
func replayManifest(f *os.File, bo badger.Options) (m badger.Manifest, off int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable: %s", firstLine(fmt.Sprint(r)))
		}
	}()
	return badger.ReplayManifestFile(f, bo.ExternalMagicVersion, bo)
}

// verifyTable opens the table read-only and verifies its checksums. A table
// too damaged for Badger's reader (which panics on a truncated footer) is
// reported as an error.
func verifyTable(path string, compression options.CompressionType, blockSize int) (err error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("the MANIFEST lists this table but the file is missing")
	case err != nil:
		return err
	case info.Size() == 0:
		return errors.New("the table is empty")
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable table: %s", firstLine(fmt.Sprint(r)))
		}
		_ = mf.Close(-1)
	}()
	// The table only wraps mf, which the deferred function closes.
	_, err = table.OpenTable(mf, table.Options{
		ReadOnly:    true,
		ChkMode:     options.OnTableRead,
		Compression: compression,
		BlockSize:   blockSize,
	})
	return err
}

// CheckFiles verifies the table files of the data directory dir against its
// MANIFEST and returns every damaged one (Open stops at the first). It
// takes the directory's lock for reading, so it fails with ErrLocked while
// a writer has the store open.
func CheckFiles(dir string) ([]*FileError, error) {
	if ownsDirLock {
		lock, err := lockDir(dir, true)
		if err != nil {
			return nil, err
		}
		defer lock.release()
	}
	return checkTables(dir, badger.DefaultOptions(dir), false)
}
