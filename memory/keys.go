package memory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidSession is returned for a session id the store cannot key: empty,
// longer than MaxSessionIDLen bytes, or holding '/' or NUL. The error wrapping
// it names the id.
var ErrInvalidSession = errors.New("memory: invalid session id")

// MaxSessionIDLen is the longest session id, in bytes.
const MaxSessionIDLen = 512

// ValidateSession checks that id can name a session.
func ValidateSession(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w %q: empty", ErrInvalidSession, id)
	case len(id) > MaxSessionIDLen:
		return fmt.Errorf("%w %.40q...: longer than %d bytes", ErrInvalidSession, id, MaxSessionIDLen)
	case strings.ContainsRune(id, '/'):
		return fmt.Errorf("%w %q: contains '/'", ErrInvalidSession, id)
	case strings.ContainsRune(id, 0):
		return fmt.Errorf("%w %q: contains NUL", ErrInvalidSession, id)
	}
	return nil
}

// seqKey returns prefix + session + "/" + seq (8 bytes big-endian), so that
// keys of one session sort by sequence number.
func seqKey(prefix, session string, seq uint64) []byte {
	k := make([]byte, 0, len(prefix)+len(session)+1+8)
	k = append(k, prefix...)
	k = append(k, session...)
	k = append(k, '/')
	return binary.BigEndian.AppendUint64(k, seq)
}

// seqPrefix returns prefix + session + "/", the prefix of all of a session's
// seqKeys. Session ids hold no '/', so no other session shares it.
func seqPrefix(prefix, session string) []byte {
	k := make([]byte, 0, len(prefix)+len(session)+1)
	k = append(k, prefix...)
	k = append(k, session...)
	return append(k, '/')
}

// keySeq returns the sequence number at the end of a seqKey.
func keySeq(key []byte) (uint64, bool) {
	if len(key) < 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[len(key)-8:]), true
}

func journalKey(session string, seq uint64) []byte  { return seqKey(prefixJournal, session, seq) }
func snapshotKey(session string, seq uint64) []byte { return seqKey(prefixSnapshot, session, seq) }
func headKey(session string) []byte                 { return []byte(prefixHead + session) }

// head is a session's journal position, stored under headKey.
type head struct {
	Tail       uint64 // seq of the last entry; 0 = empty
	Activation uint64 // the current activation; 0 = never activated
}

func (h head) encode() []byte {
	b := make([]byte, 0, 16)
	b = binary.BigEndian.AppendUint64(b, h.Tail)
	return binary.BigEndian.AppendUint64(b, h.Activation)
}

func decodeHead(b []byte) (head, error) {
	if len(b) != 16 {
		return head{}, fmt.Errorf("%w: head record has %d bytes, want 16", ErrCorruptStore, len(b))
	}
	return head{Tail: binary.BigEndian.Uint64(b), Activation: binary.BigEndian.Uint64(b[8:])}, nil
}
