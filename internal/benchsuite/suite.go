package benchsuite

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rs/zerolog"
)

// The workload names, as Options.Only and `agcore bench --only` take them.
const (
	WorkloadTurnOverhead = "turn-overhead"
	WorkloadFanOut       = "fan-out"
	WorkloadSessions     = "sessions"
	WorkloadJournal      = "journal"
	WorkloadRetrieval    = "retrieval"
	WorkloadRecovery     = "recovery"
	WorkloadIdleSessions = "idle-sessions"
)

// Workloads returns the workload names in the order Run runs them.
func Workloads() []string {
	return []string{WorkloadTurnOverhead, WorkloadFanOut, WorkloadSessions, WorkloadJournal, WorkloadRetrieval, WorkloadRecovery, WorkloadIdleSessions}
}

// Options configures Run. The zero value runs every workload in its full
// size in os.TempDir().
type Options struct {
	// Only selects workloads by name (see Workloads). Empty means all.
	Only []string
	// Quick runs the workloads in their quick sizes: the whole suite then
	// takes well under a minute. A field set in a workload's config below
	// wins over both sizes.
	Quick bool
	// Dir is the parent of the temporary data directories of the journal,
	// retrieval and recovery workloads. Empty means os.TempDir().
	Dir string
	// Logger receives a line as each workload starts and ends. The zero
	// Logger discards them.
	Logger zerolog.Logger

	// TurnOverhead sizes the turn-overhead workload; zero means defaults.
	TurnOverhead TurnOverheadConfig
	// FanOut sizes the fan-out workload; zero means defaults.
	FanOut FanOutConfig
	// Sessions sizes the sessions workload; zero means defaults.
	Sessions SessionsConfig
	// Journal sizes the journal workload; zero means defaults. Its Dir
	// defaults to Options.Dir.
	Journal JournalConfig
	// Retrieval sizes the retrieval workload; zero means defaults. Its Dir
	// defaults to Options.Dir.
	Retrieval RetrievalConfig
	// Recovery sizes the recovery workload; zero means defaults. Its Dir
	// defaults to Options.Dir.
	Recovery RecoveryConfig
	// IdleSessions sizes the idle-sessions workload; zero means defaults.
	// Its Dir defaults to Options.Dir.
	IdleSessions IdleConfig
}

// Run runs the selected workloads one after the other and returns their
// report. It fails with ErrUnknownWorkload for a name it does not know,
// before running anything, and stops at the first workload that fails.
func Run(ctx context.Context, opts Options) (*Report, error) {
	for _, name := range opts.Only {
		if !slices.Contains(Workloads(), name) {
			return nil, fmt.Errorf("%w %q (known: %v)", ErrUnknownWorkload, name, Workloads())
		}
	}
	rep := &Report{Machine: DetectMachine(), Quick: opts.Quick}
	q := opts.Quick
	steps := []struct {
		name string
		run  func() error
	}{
		{WorkloadTurnOverhead, func() (err error) {
			rep.TurnOverhead, err = TurnOverhead(ctx, opts.TurnOverhead.withDefaults(q))
			return err
		}},
		{WorkloadFanOut, func() (err error) {
			rep.FanOut, err = FanOut(ctx, opts.FanOut.withDefaults(q))
			return err
		}},
		{WorkloadSessions, func() (err error) {
			rep.Sessions, err = Sessions(ctx, opts.Sessions.withDefaults(q))
			return err
		}},
		{WorkloadJournal, func() (err error) {
			cfg := opts.Journal.withDefaults(q)
			cfg.Dir = cmp.Or(cfg.Dir, opts.Dir)
			rep.Journal, err = Journal(ctx, cfg)
			return err
		}},
		{WorkloadRetrieval, func() (err error) {
			cfg := opts.Retrieval.withDefaults(q)
			cfg.Dir = cmp.Or(cfg.Dir, opts.Dir)
			rep.Retrieval, err = Retrieval(ctx, cfg)
			return err
		}},
		{WorkloadRecovery, func() (err error) {
			cfg := opts.Recovery.withDefaults(q)
			cfg.Dir = cmp.Or(cfg.Dir, opts.Dir)
			rep.Recovery, err = Recovery(ctx, cfg)
			return err
		}},
		{WorkloadIdleSessions, func() (err error) {
			cfg := opts.IdleSessions.withDefaults(q)
			cfg.Dir = cmp.Or(cfg.Dir, opts.Dir)
			rep.IdleSessions, err = IdleSessions(ctx, cfg)
			return err
		}},
	}
	start := time.Now()
	for _, s := range steps {
		if len(opts.Only) > 0 && !slices.Contains(opts.Only, s.name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		opts.Logger.Info().Str("workload", s.name).Bool("quick", q).Msg("benchmark starting")
		t0 := time.Now()
		if err := s.run(); err != nil {
			return nil, fmt.Errorf("benchmark %s: %w", s.name, err)
		}
		opts.Logger.Info().Str("workload", s.name).Dur("took", time.Since(t0)).Msg("benchmark done")
	}
	rep.ElapsedSeconds = time.Since(start).Seconds()
	return rep, nil
}

// orDefault returns v, or full (quick when isQuick is set) when v is zero.
func orDefault[T comparable](v, full, quick T, isQuick bool) T {
	var zero T
	if v != zero {
		return v
	}
	if isQuick {
		return quick
	}
	return full
}
