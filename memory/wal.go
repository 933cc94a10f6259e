package memory

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
)

// The layout of Badger's log files (memtable write-ahead logs and value-log
// files), as its replay reads them: a 20-byte header, then entries of
// {meta, user meta, uvarint key length, uvarint value length, uvarint
// expiry, key, value, CRC-32C of all that, 4 bytes big-endian}. The entries
// of a transaction carry bitTxn in their meta, and the transaction ends
// with an entry carrying bitFinTxn whose value is the commit timestamp.
const (
	logHeaderSize = 20
	logMaxKeyLen  = 1 << 16
	logBitTxn     = 1 << 6
	logBitFinTxn  = 1 << 7
)

// scanLogs finds, for each write-ahead log that Badger's Open replays (every
// memtable log, and the newest value-log file), where the replay will stop:
// after the last complete transaction. Badger truncates the file there
// without a word. Bytes after that point that are not zero are either a
// damaged entry followed by what came after it, or a transaction cut short
// by the end of the process; either way they are lost to the replay. Each
// such log is reported at warn level and, unless readOnly, the bytes are
// copied to the salvage directory first.
func scanLogs(dir string, mems, vlogs []string, readOnly bool, log zerolog.Logger) ([]Recovery, error) {
	logs := mems
	if last := newestLog(vlogs); last != "" {
		logs = append(logs[:len(logs):len(logs)], last)
	}
	var recs []Recovery
	for _, name := range logs {
		path := filepath.Join(dir, name)
		r, err := scanLog(path, readOnly)
		if err != nil {
			return nil, fmt.Errorf("memory: check write-ahead log %s: %w", path, err)
		}
		if r == nil {
			continue
		}
		log.Warn().Str("component", "store").Str("file", path).Str("problem", r.Problem).Str("action", r.Action).
			Msg("write-ahead log damaged or cut short: entries after the damage are not replayed")
		recs = append(recs, *r)
	}
	return recs, nil
}

// newestLog returns the value-log file with the highest number.
func newestLog(names []string) string {
	best, bestFid := "", int64(-1)
	for _, n := range names {
		fid, err := strconv.ParseInt(strings.TrimSuffix(n, vlogSuffix), 10, 64)
		if err == nil && fid > bestFid {
			best, bestFid = n, fid
		}
	}
	return best
}

// scanLog returns a Recovery when the replay of the log at path stops
// before bytes that are not zero, nil otherwise.
func scanLog(path string, readOnly bool) (*Recovery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() <= logHeaderSize {
		return nil, nil
	}
	end, err := replayEnd(bufio.NewReaderSize(io.NewSectionReader(f, logHeaderSize, info.Size()-logHeaderSize), 64<<10))
	if err != nil {
		return nil, err
	}
	end += logHeaderSize
	last, err := lastNonZero(f, end, info.Size())
	if err != nil || last < 0 {
		return nil, err
	}
	r := &Recovery{
		File:    path,
		Problem: fmt.Sprintf("the replay stops at offset %d; the %d bytes after it are not replayed (a damaged entry, or a write cut short)", end, last+1-end),
		Lost:    true,
	}
	if readOnly {
		return r, nil
	}
	saved, err := salvage(f, path, end, last+1)
	if err != nil {
		return nil, err
	}
	r.Action = "saved to " + saved
	return r, nil
}

// salvage copies bytes [from, to) of the log f to the salvage directory
// beside it, as <name>@<from>, and returns that path.
func salvage(f *os.File, path string, from, to int64) (string, error) {
	dir := filepath.Join(filepath.Dir(path), SalvageDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	out := filepath.Join(dir, fmt.Sprintf("%s@%d", filepath.Base(path), from))
	w, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(w, io.NewSectionReader(f, from, to-from)); err != nil {
		_ = w.Close()
		return "", err
	}
	if err := w.Sync(); err != nil {
		_ = w.Close()
		return "", err
	}
	return out, w.Close()
}

// replayEnd reads log entries from r (which starts after the file header)
// and returns the offset, relative to r, after the last entry Badger's
// replay keeps: a complete transaction, or an entry outside any.
func replayEnd(r *bufio.Reader) (int64, error) {
	var (
		off, end   int64
		lastCommit uint64
		crc        = crc32.New(castagnoli)
	)
	for {
		meta, key, value, n, ok := readLogEntry(r, crc)
		if !ok {
			return end, nil
		}
		off += n
		switch {
		case meta&logBitTxn != 0:
			ts := keyTs(key)
			if lastCommit == 0 {
				lastCommit = ts
			}
			if lastCommit != ts {
				return end, nil
			}
		case meta&logBitFinTxn != 0:
			ts, err := strconv.ParseUint(string(value), 10, 64)
			if err != nil || ts != lastCommit {
				return end, nil
			}
			lastCommit = 0
			end = off
		default:
			if lastCommit != 0 {
				return end, nil
			}
			end = off
		}
	}
}

// readLogEntry reads one entry; ok is false where Badger's replay stops
// reading (end of data, an impossible length, a checksum mismatch, an entry
// without a key).
func readLogEntry(r *bufio.Reader, crc hash.Hash32) (meta byte, key, value []byte, n int64, ok bool) {
	crc.Reset()
	hr := &hashingReader{r: r, h: crc}
	var hdr [2]byte
	if _, err := io.ReadFull(hr, hdr[:]); err != nil {
		return 0, nil, nil, 0, false
	}
	klen, err1 := binary.ReadUvarint(hr)
	vlen, err2 := binary.ReadUvarint(hr)
	_, err3 := binary.ReadUvarint(hr)
	if err := errors.Join(err1, err2, err3); err != nil || klen > logMaxKeyLen || vlen > math.MaxUint32 {
		return 0, nil, nil, 0, false
	}
	kv := make([]byte, klen+vlen)
	if _, err := io.ReadFull(hr, kv); err != nil {
		return 0, nil, nil, 0, false
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil || binary.BigEndian.Uint32(sum[:]) != crc.Sum32() || klen == 0 {
		return 0, nil, nil, 0, false
	}
	return hdr[0], kv[:klen], kv[klen:], hr.n + 4, true
}

// keyTs returns the commit timestamp at the end of a stored key.
func keyTs(key []byte) uint64 {
	if len(key) <= 8 {
		return 0
	}
	return math.MaxUint64 - binary.BigEndian.Uint64(key[len(key)-8:])
}

// hashingReader hashes and counts what it reads.
type hashingReader struct {
	r *bufio.Reader
	h hash.Hash32
	n int64
}

func (h *hashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	h.n += int64(n)
	return n, err
}

func (h *hashingReader) ReadByte() (byte, error) {
	b, err := h.r.ReadByte()
	if err == nil {
		h.h.Write([]byte{b})
		h.n++
	}
	return b, err
}

// lastNonZero returns the offset of the last byte in [from, size) of f that
// is not zero, or -1. It skips the holes of a sparse file (Badger sizes its
// logs ahead of the data), where the platform can tell.
func lastNonZero(f *os.File, from, size int64) (int64, error) {
	const chunk = 1 << 20
	buf := make([]byte, chunk)
	last := int64(-1)
	for pos := from; pos < size; {
		next, err := nextData(f, pos)
		if err != nil {
			return 0, err
		}
		if next < 0 || next >= size {
			break
		}
		pos = next
		n, err := f.ReadAt(buf[:min(chunk, size-pos)], pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := n - 1; i >= 0; i-- {
			if buf[i] != 0 {
				last = pos + int64(i)
				break
			}
		}
		if n == 0 {
			break
		}
		pos += int64(n)
	}
	return last, nil
}
