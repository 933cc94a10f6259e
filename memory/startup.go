package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
)

// ErrNeedsReplay is returned by a read-only Open of a store that was not
// closed cleanly: its write-ahead log must be replayed, which only a
// read-write Open does.
var ErrNeedsReplay = errors.New("memory: the store was not closed cleanly; open it for writing once to replay its write-ahead log")

// Recovery is something Open found in the data directory, left there by a
// process that stopped abruptly, and what it did about it.
type Recovery struct {
	// File is the path of the file concerned.
	File string `json:"file"`
	// Problem says what was wrong.
	Problem string `json:"problem"`
	// Action is what Open did: "removed" (an empty file that never held
	// data), "saved to <path>" (bytes the replay drops, kept aside), or ""
	// when it only reported the problem.
	Action string `json:"action,omitempty"`
	// Lost is true when entries may be missing from the store: a
	// write-ahead log whose replay stops before its end.
	Lost bool `json:"lost,omitempty"`
}

// Files of a Badger directory that Open looks at.
const (
	manifestName    = "MANIFEST"
	keyRegistryName = "KEYREGISTRY"
	memSuffix       = ".mem"  // the write-ahead log of a memtable
	vlogSuffix      = ".vlog" // a value-log file
	tableSuffix     = ".sst"
	// SalvageDir is the sub-directory of the data directory where Open
	// keeps the bytes a write-ahead log replay drops.
	SalvageDir = "salvage"
)

// recoverStartup makes dir safe for Badger to open after a process was
// killed at any point of an earlier open or close. The caller holds the
// directory's lock, so no Badger process is writing in dir.
//
// Badger creates each new log file in two steps: it creates the file, then
// sizes it and writes its header through a memory map. A kill between the
// two leaves an empty file: a memtable's write-ahead log (NNNNN.mem) or a
// value-log file (NNNNNN.vlog) on every open, the MANIFEST on the very first
// one. The next open refuses such a file ("Create a new file"). An empty
// file holds no data, so removing it loses nothing; a file with any byte in
// it is left to Badger. The MANIFEST is only removed when no table file
// exists: an empty MANIFEST beside tables means their index is lost, and a
// fresh one would make Badger delete every table.
//
// It then checks the write-ahead logs Badger will replay (see scanLogs).
func recoverStartup(dir string, readOnly bool, log zerolog.Logger) ([]Recovery, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var (
		recs   []Recovery
		tables int
		mems   []string
		vlogs  []string
		empty  []string
	)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		switch {
		case strings.HasSuffix(name, tableSuffix):
			tables++
		case info.Size() == 0 && (strings.HasSuffix(name, memSuffix) || strings.HasSuffix(name, vlogSuffix) ||
			name == manifestName || name == keyRegistryName):
			empty = append(empty, name)
		case strings.HasSuffix(name, memSuffix):
			mems = append(mems, name)
		case strings.HasSuffix(name, vlogSuffix):
			vlogs = append(vlogs, name)
		}
	}
	for _, name := range empty {
		path := filepath.Join(dir, name)
		if name == manifestName && tables > 0 {
			return nil, &FileError{File: path, Err: fmt.Errorf("the MANIFEST is empty but %d table files exist: the index of the tables is lost (restore a backup)", tables)}
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("memory: remove the empty %s left by an interrupted start: %w", path, err)
		}
		r := Recovery{File: path, Problem: "empty file left by a process stopped while it opened or closed the store", Action: "removed"}
		log.Warn().Str("component", "store").Str("file", path).Msg("removed an empty file left by an interrupted start")
		recs = append(recs, r)
	}
	if readOnly && len(mems) > 0 {
		return nil, fmt.Errorf("%w (%s)", ErrNeedsReplay, dir)
	}
	scanned, err := scanLogs(dir, mems, vlogs, readOnly, log)
	if err != nil {
		return nil, err
	}
	return append(recs, scanned...), nil
}
