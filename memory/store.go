package memory

import (
	"cmp"
	"errors"
	"fmt"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"
)

// ErrNotFound is returned when a key, page or session does not exist.
var ErrNotFound = errors.New("memory: not found")

// ErrClosed is returned by operations on a closed Store.
var ErrClosed = errors.New("memory: store closed")

// Key-space prefixes. Every concern owns one prefix so that scans never cross
// into another's keys.
const (
	prefixJournal  = "j/" // j/<session>/<seq: 8 bytes big-endian>
	prefixSnapshot = "s/" // s/<session>/<seq: 8 bytes big-endian>
	prefixHead     = "t/" // t/<session> -> tail seq and activation (16 bytes)
	prefixSession  = "m/" // m/<len: 2 bytes big-endian><session><key>  session key-value memory
	// PrefixKnowledge is the key space of the knowledge package (pages and
	// their inverted index).
	PrefixKnowledge = "k/"
)

// Options configures a Store. The zero value is not valid: set Dir or
// InMemory.
type Options struct {
	// Dir is the data directory; it is created if missing.
	Dir string
	// InMemory keeps everything in memory (tests); Dir must then be empty.
	InMemory bool
	// Logger receives Badger's diagnostics at debug level; the zero Logger
	// discards them.
	Logger zerolog.Logger
	// MemTableSize is the size of each of Badger's two memtables, in bytes.
	// Zero means 16 MiB. Larger memtables absorb bulk loads (such as
	// knowledge.Base.Import) in fewer, larger tables, with less compaction,
	// for twice the size in memory.
	MemTableSize int64
	// BlockCacheSize is the size of Badger's cache of decompressed table
	// blocks, in bytes. Zero means 16 MiB. Reads that miss it decompress a
	// block from disk; a cache holding the hot part of a large knowledge
	// index makes its queries faster.
	BlockCacheSize int64
}

// Defaults of Options.
const (
	// DefaultMemTableSize is the memtable size when Options.MemTableSize is 0.
	DefaultMemTableSize = 16 << 20
	// DefaultBlockCacheSize is the block cache size when
	// Options.BlockCacheSize is 0.
	DefaultBlockCacheSize = 16 << 20
)

// Store is one Badger database holding every key space of a runtime. It is
// safe for concurrent use.
type Store struct {
	db     *badger.DB
	logger zerolog.Logger

	// sessions serialises the journal writes of each session, whichever
	// Journal on this store makes them.
	sessions sessionLocks

	mu      sync.Mutex
	closed  bool
	closers []func() error // run by Close before the database closes, newest first
}

// Open opens (or creates) the store.
func Open(opts Options) (*Store, error) {
	var bo badger.Options
	switch {
	case opts.InMemory && opts.Dir != "":
		return nil, errors.New("memory: Options.Dir must be empty when InMemory is set")
	case opts.InMemory:
		bo = badger.DefaultOptions("").WithInMemory(true)
	case opts.Dir == "":
		return nil, errors.New("memory: Options.Dir is empty (set a directory or InMemory)")
	default:
		bo = badger.DefaultOptions(opts.Dir)
	}
	if opts.MemTableSize < 0 || opts.BlockCacheSize < 0 {
		return nil, errors.New("memory: Options.MemTableSize and BlockCacheSize must not be negative")
	}
	memTable := cmp.Or(opts.MemTableSize, DefaultMemTableSize)
	blockCache := cmp.Or(opts.BlockCacheSize, DefaultBlockCacheSize)
	bo = bo.WithLogger(badgerLogger{opts.Logger}).
		// Keep the footprint small: agcore stores many small values.
		WithNumMemtables(2).WithMemTableSize(memTable).WithNumLevelZeroTables(2).
		WithValueLogFileSize(64 << 20).WithBlockCacheSize(blockCache).WithIndexCacheSize(8 << 20)
	db, err := badger.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("memory: open %q: %w", opts.Dir, err)
	}
	return &Store{db: db, logger: opts.Logger}, nil
}

// DB returns the underlying Badger database, for the memory sub-packages.
func (s *Store) DB() *badger.DB { return s.db }

// Close stops the journals opened on the store (committing and syncing the
// appends they hold), then flushes and closes the database. Calling Close
// again returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()

	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		errs = append(errs, closers[i]())
	}
	if err := s.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("memory: close: %w", err))
	}
	return errors.Join(errs...)
}

// onClose registers f to run when the store closes, before the database
// does. It fails with ErrClosed when the store is already closed.
func (s *Store) onClose(f func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.closers = append(s.closers, f)
	return nil
}

// isClosed reports whether Close has been called.
func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// dbErr maps Badger's closed-database error onto ErrClosed, keeping the
// original in the chain.
func dbErr(err error) error {
	if errors.Is(err, badger.ErrDBClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

// badgerLogger routes Badger's logging into zerolog at debug level (warnings
// and errors at their own level).
type badgerLogger struct{ l zerolog.Logger }

// Errorf implements badger.Logger.
func (b badgerLogger) Errorf(f string, a ...any) {
	b.l.Error().Str("component", "badger").Msgf(f, a...)
}

// Warningf implements badger.Logger.
func (b badgerLogger) Warningf(f string, a ...any) {
	b.l.Warn().Str("component", "badger").Msgf(f, a...)
}

// Infof implements badger.Logger at debug level.
func (b badgerLogger) Infof(f string, a ...any) {
	b.l.Debug().Str("component", "badger").Msgf(f, a...)
}

// Debugf implements badger.Logger.
func (b badgerLogger) Debugf(f string, a ...any) {
	b.l.Debug().Str("component", "badger").Msgf(f, a...)
}
