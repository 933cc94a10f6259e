package memory

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// A backup is a header, Badger's backup stream of every key at one read
// timestamp, and a trailer that holds the stream's length and CRC-32C, so
// that Restore rejects a truncated or altered file before loading anything:
//
//	"agcore-backup\n" (14 bytes), format version (4 bytes big-endian)
//	stream
//	stream length (8 bytes big-endian), CRC-32C of the stream (4 bytes), "agcore-end\n" (11 bytes)
const (
	backupMagic   = "agcore-backup\n"
	backupEnd     = "agcore-end\n"
	backupVersion = 1
	backupHeader  = len(backupMagic) + 4
	backupTrailer = 8 + 4 + len(backupEnd)
)

// ErrBadBackup is returned by Restore for a file that is not a complete,
// intact backup.
var ErrBadBackup = errors.New("memory: not a valid backup")

// ErrNotEmpty is returned by Restore when the target directory holds files.
var ErrNotEmpty = errors.New("memory: restore target is not empty")

// BackupInfo describes a backup written by Backup.
type BackupInfo struct {
	// Bytes is the size of the backup.
	Bytes int64 `json:"bytes"`
	// Version is the newest version (Badger commit timestamp) it holds.
	Version uint64 `json:"version"`
}

// Backup writes every key of the store, as of one moment, to w, while the
// store stays in use: writes made after that moment are not in the backup,
// and none made before is missing. (Badger's own DB.Backup reads with
// several transactions, which can disagree; Backup reads with one.) A
// cancelled ctx stops it with ctx's error. Restore reads the result.
func (s *Store) Backup(ctx context.Context, w io.Writer) (BackupInfo, error) {
	if s.isClosed() {
		return BackupInfo{}, ErrClosed
	}
	cw := &countingWriter{w: w}
	header := binary.BigEndian.AppendUint32([]byte(backupMagic), backupVersion)
	if _, err := cw.Write(header); err != nil {
		return BackupInfo{}, fmt.Errorf("memory: backup: %w", err)
	}
	body := &countingWriter{w: &stoppableWriter{w: cw, stop: ctx.Err}, crc: crc32.New(castagnoli)}
	stream := s.db.NewStream()
	stream.NumGo = 1 // one producer, so one read transaction: one timestamp
	stream.LogPrefix = "memory.Backup"
	version, err := stream.Backup(body, 0)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return BackupInfo{}, fmt.Errorf("memory: backup: %w", dbErr(err))
	}
	trailer := binary.BigEndian.AppendUint64(nil, uint64(body.n))
	trailer = binary.BigEndian.AppendUint32(trailer, body.crc.Sum32())
	trailer = append(trailer, backupEnd...)
	if _, err := cw.Write(trailer); err != nil {
		return BackupInfo{}, fmt.Errorf("memory: backup: %w", err)
	}
	return BackupInfo{Bytes: cw.n, Version: version}, nil
}

// Restore loads the backup r (of size bytes) into a new store at opts.Dir,
// which must be empty or absent (ErrNotEmpty otherwise), and closes it. It
// first checks the whole file against its trailer (ErrBadBackup for a
// truncated or altered one), so nothing is loaded from a damaged backup. On
// failure it removes what it wrote, leaving the directory as it found it.
func Restore(ctx context.Context, r io.ReaderAt, size int64, opts Options) (err error) {
	if opts.InMemory || opts.ReadOnly || opts.Dir == "" {
		return errors.New("memory: restore needs Options.Dir, for writing")
	}
	body, err := checkBackup(ctx, r, size)
	if err != nil {
		return err
	}
	created, err := prepareRestoreDir(opts.Dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, undoRestore(opts.Dir, created))
		}
	}()
	s, err := Open(opts)
	if err != nil {
		return err
	}
	loadErr := s.db.Load(&stoppableReader{r: body, stop: ctx.Err}, 256)
	if err := errors.Join(loadErr, s.Close()); err != nil {
		return fmt.Errorf("memory: restore into %s: %w", opts.Dir, err)
	}
	return nil
}

// checkBackup verifies the header and trailer of a backup and the CRC of
// its stream, and returns the stream.
func checkBackup(ctx context.Context, r io.ReaderAt, size int64) (*io.SectionReader, error) {
	if size < int64(backupHeader+backupTrailer) {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrBadBackup, size)
	}
	header := make([]byte, backupHeader)
	trailer := make([]byte, backupTrailer)
	if _, err := r.ReadAt(header, 0); err != nil {
		return nil, fmt.Errorf("memory: read backup: %w", err)
	}
	if _, err := r.ReadAt(trailer, size-int64(backupTrailer)); err != nil {
		return nil, fmt.Errorf("memory: read backup: %w", err)
	}
	if !bytes.HasPrefix(header, []byte(backupMagic)) {
		return nil, fmt.Errorf("%w: it does not start as an agcore backup", ErrBadBackup)
	}
	if v := binary.BigEndian.Uint32(header[len(backupMagic):]); v != backupVersion {
		return nil, fmt.Errorf("%w: format version %d, this build reads %d", ErrBadBackup, v, backupVersion)
	}
	n := int64(binary.BigEndian.Uint64(trailer))
	if !bytes.HasSuffix(trailer, []byte(backupEnd)) || n != size-int64(backupHeader+backupTrailer) {
		return nil, fmt.Errorf("%w: truncated or incomplete (the end marker is missing or the length does not match)", ErrBadBackup)
	}
	body := io.NewSectionReader(r, int64(backupHeader), n)
	crc := crc32.New(castagnoli)
	if _, err := io.Copy(crc, &stoppableReader{r: body, stop: ctx.Err}); err != nil {
		return nil, fmt.Errorf("memory: read backup: %w", err)
	}
	if want := binary.BigEndian.Uint32(trailer[8:]); crc.Sum32() != want {
		return nil, fmt.Errorf("%w: checksum mismatch (stored %08x, content has %08x): the file was altered", ErrBadBackup, want, crc.Sum32())
	}
	return io.NewSectionReader(r, int64(backupHeader), n), nil
}

// prepareRestoreDir checks that dir is empty or absent and creates it;
// created says whether it did.
func prepareRestoreDir(dir string) (created bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true, os.MkdirAll(dir, 0o700)
	case err != nil:
		return false, fmt.Errorf("memory: restore into %s: %w", dir, err)
	case len(entries) > 0:
		return false, fmt.Errorf("%w: %s holds %d entries (restore into an empty directory)", ErrNotEmpty, dir, len(entries))
	}
	return false, nil
}

// undoRestore removes what a failed restore wrote into dir, which was empty.
func undoRestore(dir string, created bool) error {
	if created {
		return os.RemoveAll(dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

// countingWriter counts (and optionally hashes) what it writes.
type countingWriter struct {
	w   io.Writer
	crc hash.Hash32
	n   int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.crc != nil {
		c.crc.Write(p[:n])
	}
	return n, err
}

// stoppableWriter fails with stop's error once it reports one (a
// context's Err).
type stoppableWriter struct {
	w    io.Writer
	stop func() error
}

func (s *stoppableWriter) Write(p []byte) (int, error) {
	if err := s.stop(); err != nil {
		return 0, err
	}
	return s.w.Write(p)
}

// stoppableReader fails with stop's error once it reports one.
type stoppableReader struct {
	r    io.Reader
	stop func() error
}

func (s *stoppableReader) Read(p []byte) (int, error) {
	if err := s.stop(); err != nil {
		return 0, err
	}
	return s.r.Read(p)
}
