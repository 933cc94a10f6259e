package memory

import (
	"errors"
	"fmt"
	"hash/crc32"
)

// ErrCorruptStore is returned when the store itself is damaged: a file of
// the data directory (a table, the MANIFEST) fails its checks, Badger cannot
// read it, or a bookkeeping record (not a journal entry) cannot be decoded.
var ErrCorruptStore = errors.New("memory: corrupt store")

// ErrCorrupt is wrapped by every *CorruptError: a session's journal lost or
// altered an entry, so replaying it would not give back what was recorded.
var ErrCorrupt = errors.New("memory: corrupt journal")

// CorruptError says which entry of which session's journal is corrupt and
// what check it failed. A session whose journal is corrupt must not be
// replayed (it could re-run a tool with altered arguments); the other
// sessions are unaffected.
type CorruptError struct {
	Session string
	// Seq is the entry at fault; for a missing entry, the first one missing.
	Seq uint64
	// Problem says what failed: "checksum mismatch", "missing entry", ...
	Problem string
	// Err is the underlying error, if any (a *messages.DecodeError, a
	// storage error).
	Err error
}

// Error names the session, the entry and the problem.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("memory: journal %s seq %d corrupt: %s", e.Session, e.Seq, e.detail())
}

// detail is the problem and its cause.
func (e *CorruptError) detail() string {
	if e.Err == nil {
		return e.Problem
	}
	return e.Problem + ": " + e.Err.Error()
}

// Unwrap returns ErrCorrupt and the underlying error.
func (e *CorruptError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrCorrupt}
	}
	return []error{ErrCorrupt, e.Err}
}

// FileError says which file of the data directory is damaged and how. It
// wraps ErrCorruptStore.
type FileError struct {
	File string
	Err  error
}

// Error names the file.
func (e *FileError) Error() string { return fmt.Sprintf("damaged file %s: %v", e.File, e.Err) }

// Unwrap returns ErrCorruptStore and the underlying error.
func (e *FileError) Unwrap() []error { return []error{ErrCorruptStore, e.Err} }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32c returns the CRC-32C (Castagnoli) of b.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
