package jetstream

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agcore/agcore/memory"
)

// Config configures a Journal. Conn is the only required field; every other
// zero value is a documented default.
type Config struct {
	// Conn is the connection to the NATS servers. Required; the journal
	// uses it and never closes it.
	Conn *nats.Conn
	// Stream is the prefix of the journal's stream names: stream i is
	// "<Stream>_<i>". Empty means "AGCORE_JOURNAL". Letters, digits, '-'
	// and '_' only.
	Stream string
	// Subject is the prefix of the journal's subjects: the entries of a
	// session hashed to stream i go on "<Subject>.<i>.e.<id>" and its
	// snapshots on "<Subject>.<i>.s.<id>", where <id> is the session id in
	// unpadded base64url. Empty means "agcore.journal". Dot-separated
	// tokens of letters, digits, '-' and '_'.
	Subject string
	// Streams is the number of streams the sessions are hashed over (FNV-1a
	// of the id), so that a stream's leader election stalls only the
	// sessions of that stream. Zero means 1. It is fixed for the life of a
	// deployment: New refuses streams created with another number, since
	// changing it would move sessions to streams that do not hold their
	// entries.
	Streams int
	// Replicas is the replication factor of each stream. Zero means 3 when
	// the connected server belongs to a cluster and 1 otherwise.
	// DurabilityNone always uses 1.
	Replicas int
	// Duplicates is the window in which the servers recognise a resent
	// append (by its Nats-Msg-Id) and acknowledge it without storing it
	// again. Zero means 2 minutes; it must exceed the longest an append is
	// retried.
	Duplicates time.Duration
	// AttemptTimeout bounds each request to the servers (one publish, one
	// read). A publish without an answer within it is resent, with the same
	// Nats-Msg-Id, until the caller's context ends. Zero means 2 seconds.
	AttemptTimeout time.Duration
	// Options are the journal options shared with the Badger journal.
	// Durability maps to the streams: DurabilitySync and DurabilityBatch
	// use file storage (sync needs servers run with `sync_interval:
	// always`, which a client cannot set or see: see docs/cluster.md),
	// DurabilityNone memory storage with one replica.
	Options memory.JournalOptions
}

// Defaults.
const (
	DefaultStream         = "AGCORE_JOURNAL"
	DefaultSubject        = "agcore.journal"
	DefaultDuplicates     = 2 * time.Minute
	DefaultAttemptTimeout = 2 * time.Second
)

// ErrConfig is wrapped by every error New returns for a Config field.
var ErrConfig = errors.New("jetstream: invalid config")

var (
	streamName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	subjectPfx = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
)

// withDefaults returns cfg with its defaults filled in, or an error naming
// the field that is wrong. It does not change the caller's Config.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Conn == nil {
		return cfg, fmt.Errorf("%w: Conn is nil", ErrConfig)
	}
	if cfg.Stream == "" {
		cfg.Stream = DefaultStream
	}
	if !streamName.MatchString(cfg.Stream) {
		return cfg, fmt.Errorf("%w: Stream %q: use letters, digits, '-' and '_' only", ErrConfig, cfg.Stream)
	}
	if cfg.Subject == "" {
		cfg.Subject = DefaultSubject
	}
	if !subjectPfx.MatchString(cfg.Subject) {
		return cfg, fmt.Errorf("%w: Subject %q: use dot-separated tokens of letters, digits, '-' and '_'", ErrConfig, cfg.Subject)
	}
	switch {
	case cfg.Streams == 0:
		cfg.Streams = 1
	case cfg.Streams < 0 || cfg.Streams > 1024:
		return cfg, fmt.Errorf("%w: Streams %d: want 1 to 1024", ErrConfig, cfg.Streams)
	}
	if cfg.Replicas < 0 || cfg.Replicas > 5 {
		return cfg, fmt.Errorf("%w: Replicas %d: want 1 to 5 (0 for the default)", ErrConfig, cfg.Replicas)
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
		if cfg.Conn.ConnectedClusterName() != "" {
			cfg.Replicas = 3
		}
	}
	if cfg.Duplicates == 0 {
		cfg.Duplicates = DefaultDuplicates
	}
	if cfg.Duplicates < 0 {
		return cfg, fmt.Errorf("%w: Duplicates %v is negative", ErrConfig, cfg.Duplicates)
	}
	if cfg.AttemptTimeout == 0 {
		cfg.AttemptTimeout = DefaultAttemptTimeout
	}
	if cfg.AttemptTimeout < 0 {
		return cfg, fmt.Errorf("%w: AttemptTimeout %v is negative", ErrConfig, cfg.AttemptTimeout)
	}
	o := cfg.Options
	switch o.Durability {
	case memory.DurabilitySync, memory.DurabilityBatch:
	case memory.DurabilityNone:
		cfg.Replicas = 1
	default:
		return cfg, fmt.Errorf("%w: Options.Durability: unknown mode %d", ErrConfig, int(o.Durability))
	}
	if o.SnapshotEvery == 0 {
		o.SnapshotEvery = 500
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	cfg.Options = o
	return cfg, nil
}
