package memory

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
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
	// Dir is the data directory; it is created if missing (unless
	// ReadOnly).
	Dir string
	// InMemory keeps everything in memory (tests); Dir must then be empty.
	InMemory bool
	// ReadOnly opens an existing store for reading only, beside other
	// readers and never beside a writer. A store that was not closed
	// cleanly must be opened for writing once first (ErrNeedsReplay).
	ReadOnly bool
	// Logger receives Badger's diagnostics (warnings and errors at their
	// level, the rest at debug) and what Open recovered. The zero Logger
	// discards them.
	Logger zerolog.Logger
	// MemTableSize is the size of each of Badger's two memtables, in bytes.
	// Badger allocates the first one (and room for its largest batch, about
	// 30 % more) when the store opens, and the Go heap counts it as live
	// from then on. Zero means DefaultMemTableSize (8 MiB), which is also
	// the smallest accepted: a smaller memtable could not hold an append
	// of MaxAppendBytes in one transaction. Larger memtables absorb bulk
	// loads (such as knowledge.Base.Import) in fewer, larger tables, with
	// less compaction, for twice the size in memory.
	MemTableSize int64
	// BlockCacheSize is the size of Badger's cache of decompressed table
	// blocks, in bytes; the cache fills as blocks are read. Zero means 16
	// MiB. Reads that miss it decompress a block from disk; a cache holding
	// the hot part of a large knowledge index makes its queries faster. An
	// InMemory store has no cache: its tables are kept uncompressed.
	BlockCacheSize int64
	// MinFreeSpace is the free space, in bytes, that writes (journal
	// appends, session memory) leave on the file system of Dir: a write that
	// would go below it fails with ErrNoSpace, changes nothing, and works
	// again once space is freed. Badger's own flushes and compactions use
	// this margin; they cannot fail cleanly on a full disk, since Badger
	// writes through memory maps and the process would die of SIGBUS. Zero
	// means the larger of DefaultMinFreeSpace (64 MiB) and 4 ×
	// MemTableSize; negative disables the
	// check. It does not apply to InMemory and ReadOnly stores.
	MinFreeSpace int64
}

// Defaults of Options.
const (
	// DefaultMemTableSize is the memtable size when Options.MemTableSize is
	// 0, and the smallest accepted: Badger lets a transaction take 15 % of
	// a memtable, and 15 % of 8 MiB holds an append of MaxAppendBytes with
	// its keys.
	DefaultMemTableSize = 8 << 20
	// DefaultBlockCacheSize is the block cache size when
	// Options.BlockCacheSize is 0.
	DefaultBlockCacheSize = 16 << 20
)

// Store is one Badger database holding every key space of a runtime. It is
// safe for concurrent use.
type Store struct {
	db     *badger.DB
	logger zerolog.Logger
	dir    string
	lock   *dirLock
	space  *spaceGuard // nil when writes are not checked
	// recoveries is what Open found and did before Badger opened.
	recoveries []Recovery

	// heads serialises the journal writes of each session, whichever
	// Journal on this store makes them, and keeps the sessions' heads.
	heads sessionHeads
	// syncs shares DB.Sync among the writers waiting for one.
	syncs *syncer

	mu      sync.Mutex
	closed  bool
	closers []func() error // run by Close before the database closes, newest first
}

// Open opens (or creates) the store.
//
// It survives a process killed at any instant of an earlier Open or Close:
// under the directory's lock it removes the files Badger had created but
// not yet written (a kill between creating a log file and sizing it leaves
// an empty one, which Badger refuses to open), and nothing else. Before
// Badger replays its write-ahead logs, Open checks where each replay will
// stop: bytes after that point (a damaged entry, or a write cut short) are
// reported at warn level and copied to the salvage directory, since the
// replay drops them. It then verifies the checksums of every table the
// MANIFEST lists, so a damaged table fails Open with an error naming the
// file (wrapping ErrCorruptStore) rather than altering or hiding data, or
// panicking. Once open, Badger verifies each table block and value-log
// value it reads. Recoveries lists what Open found.
func Open(opts Options) (*Store, error) { return open(opts, nil) }

// open is Open with a hook on Badger's options, for tests.
func open(opts Options, tune func(*badger.Options)) (*Store, error) {
	var bo badger.Options
	switch {
	case opts.InMemory && opts.Dir != "":
		return nil, errors.New("memory: Options.Dir must be empty when InMemory is set")
	case opts.InMemory && opts.ReadOnly:
		return nil, errors.New("memory: Options.ReadOnly cannot be set with InMemory")
	case opts.InMemory:
		bo = badger.DefaultOptions("").WithInMemory(true)
	case opts.Dir == "":
		return nil, errors.New("memory: Options.Dir is empty (set a directory or InMemory)")
	default:
		bo = badger.DefaultOptions(opts.Dir).WithReadOnly(opts.ReadOnly)
	}
	if opts.MemTableSize < 0 || opts.BlockCacheSize < 0 {
		return nil, errors.New("memory: Options.MemTableSize and BlockCacheSize must not be negative")
	}
	if opts.MemTableSize != 0 && opts.MemTableSize < DefaultMemTableSize {
		return nil, fmt.Errorf("memory: Options.MemTableSize %d is below %d (8 MiB), the smallest that holds an append of MaxAppendBytes in one transaction", opts.MemTableSize, DefaultMemTableSize)
	}
	memTable := cmp.Or(opts.MemTableSize, DefaultMemTableSize)
	blockCache := cmp.Or(opts.BlockCacheSize, DefaultBlockCacheSize)
	bo = bo.WithLogger(badgerLogger{opts.Logger}).
		// Keep the footprint small: agcore stores many small values.
		WithNumMemtables(2).WithMemTableSize(memTable).WithNumLevelZeroTables(2).
		WithValueLogFileSize(64 << 20).WithBlockCacheSize(blockCache).WithIndexCacheSize(8 << 20).
		// Verify what is read: each table block and each value-log value.
		// Whole tables are verified by Open before Badger opens them.
		WithChecksumVerificationMode(options.OnBlockRead).WithVerifyValueChecksum(true)
	if opts.InMemory {
		// Tables in memory are kept uncompressed, so they need no cache of
		// decompressed blocks, and their indexes stay with them.
		bo = bo.WithCompression(options.None).WithBlockCacheSize(0).WithIndexCacheSize(0)
	}
	if tune != nil {
		tune(&bo)
	}
	s := &Store{logger: opts.Logger, dir: opts.Dir}
	if !opts.InMemory && !opts.ReadOnly && opts.MinFreeSpace >= 0 && spaceGuardSupported {
		s.space = &spaceGuard{dir: opts.Dir, reserve: cmp.Or(opts.MinFreeSpace, max(DefaultMinFreeSpace, 4*memTable)), probe: freeSpace}
	}
	if !opts.InMemory {
		if err := s.prepare(&bo, opts.ReadOnly); err != nil {
			return nil, err
		}
	}
	db, err := openBadger(bo)
	if err != nil {
		_ = s.lock.release()
		return nil, openErr(opts.Dir, err)
	}
	s.db = db
	s.syncs = newSyncer(db.Sync)
	return s, nil
}

// prepare locks the data directory and makes it safe for Badger to open:
// see Open.
func (s *Store) prepare(bo *badger.Options, readOnly bool) error {
	dir := s.dir
	if readOnly {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("memory: open %s: %w", dir, err)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("memory: open %s: %w", dir, err)
	}
	if !ownsDirLock {
		return nil
	}
	lock, err := lockDir(dir, readOnly)
	if err != nil {
		return err
	}
	bo.BypassLockGuard = true // the lock is held, exactly as Badger takes it
	s.lock = lock
	if s.recoveries, err = recoverStartup(dir, readOnly, s.logger); err == nil {
		err = verifyTables(dir, *bo)
	}
	if err != nil {
		_ = lock.release()
		return openErr(dir, err)
	}
	return nil
}

// openBadger opens Badger, turning a panic of its open path (a damaged
// file it does not expect) into an error.
func openBadger(bo badger.Options) (db *badger.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("%w: Badger failed while opening it: %s", ErrCorruptStore, firstLine(fmt.Sprint(r)))
		}
	}()
	return badger.Open(bo)
}

// openErr names the directory in an error of Open and, unless it is a
// problem of the caller's (a lock, a store needing a writer), says what to
// do next.
func openErr(dir string, err error) error {
	if errors.Is(err, ErrLocked) || errors.Is(err, ErrNeedsReplay) {
		return err
	}
	return fmt.Errorf("memory: open %s: %w (check the store with `agcore doctor --data-dir %s`)", dir, err, dir)
}

// Recoveries returns what Open found in the data directory and did about
// it before Badger opened it: empty files of an interrupted start that it
// removed, write-ahead logs whose replay drops bytes. It is empty for a
// store that was closed cleanly.
func (s *Store) Recoveries() []Recovery { return slices.Clone(s.recoveries) }

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
	errs = append(errs, s.lock.release())
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

// badgerLogger routes Badger's logging into zerolog: warnings and errors at
// their own level, never dropped, the rest at debug level.
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

// firstLine returns s up to its first line break.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
