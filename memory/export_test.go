package memory

import "github.com/dgraph-io/badger/v4"

// PutRawEntry overwrites the stored bytes of journal entry seq of session,
// bypassing every check, so tests can plant corrupt entries.
func PutRawEntry(s *Store, session string, seq uint64, raw []byte) error {
	return s.DB().Update(func(txn *badger.Txn) error { return txn.Set(journalKey(session, seq), raw) })
}
