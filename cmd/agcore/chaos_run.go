package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/chaos"
)

// chaosTally gathers what a run reports as it goes, from the workload's
// events and the kills. It is safe for concurrent use.
type chaosTally struct {
	mu         sync.Mutex
	acks       []chaos.Ack
	ended      map[string]int
	faults     map[chaos.FaultKind]int64
	refused    int
	problems   []string
	rerunnable []string
	// kills counts the workers killed, restarts the workers started after
	// one, and recoveries the time from each kill to the next worker's
	// "ready".
	kills, restarts int
	recoveries      []time.Duration
	lastKill        time.Time
	// started records that the last worker started had opened every
	// session (its "ready"), to detect workers killed in their start-up.
	started bool
	now     func() time.Time
}

func newChaosTally() *chaosTally {
	return &chaosTally{ended: map[string]int{}, faults: map[chaos.FaultKind]int64{}, now: time.Now}
}

// add takes in one event of the workload.
func (t *chaosTally) add(ev chaosEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev.Type {
	case "ready":
		t.started = true
		t.rerunnable = ev.Rerunnable
		if !t.lastKill.IsZero() {
			t.recoveries = append(t.recoveries, t.now().Sub(t.lastKill))
			t.lastKill = time.Time{}
		}
	case "ack":
		t.acks = append(t.acks, chaos.Ack{Session: ev.Session, TurnID: ev.TurnID, Text: ev.Text})
	case "end":
		t.ended[ev.Outcome]++
	case "fault":
		t.faults[ev.Fault]++
	case "refused":
		t.refused++
	case "problem":
		t.problems = append(t.problems, ev.Text)
	}
}

// killed records a kill at the time at.
func (t *chaosTally) killed(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.kills++
	t.lastKill = at
}

// restarted records the start of a worker after a kill, and reports
// whether the one before got through its start-up (opened every session,
// which resumes their open turns).
func (t *chaosTally) restarted() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.restarts++
	started := t.started
	t.started = false
	return started
}

// chaosProgress is what the live view shows of a run.
type chaosProgress struct {
	ended, failed   int
	faults          int64
	kills, restarts int
}

// snapshot returns the progress so far.
func (t *chaosTally) snapshot() chaosProgress {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := chaosProgress{kills: t.kills, restarts: t.restarts}
	for outcome, n := range t.ended {
		p.ended += n
		if outcome != "completed" {
			p.failed += n
		}
	}
	for _, n := range t.faults {
		p.faults += n
	}
	return p
}

// runChaos runs a chaos test as o says and reports it.
func runChaos(cmd *cobra.Command, a *app, o *chaosOptions) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	dataDir, cleanup, err := chaosDataDir(a.dataDir, a.getenv("TMPDIR"))
	if err != nil {
		return err
	}
	ledger := dataDir + ".ledger"
	tally := newChaosTally()
	view := newChaosView(out, termFor(out, a.getenv), o, tally)
	view.header(dataDir)
	start := time.Now()
	keep := func() {
		if cleanup != nil {
			cleanup(true)
		}
	}
	err = view.run(ctx, func() error {
		if o.killMin > 0 {
			return killLoop(ctx, a, o, dataDir, tally)
		}
		return runInProcess(ctx, a, o, dataDir, ledger, tally)
	})
	if err != nil {
		keep()
		return err
	}
	rep, err := checkChaos(ctx, o, dataDir, ledger, tally, a.configPath != "")
	if err != nil {
		keep()
		return err
	}
	rep.Wall = time.Since(start)
	rep.Seed, rep.Sessions, rep.TurnsPerSession = o.seed, o.sessions, o.turns
	rep.DataDir = dataDir
	rep.Kept = o.keep || len(rep.Violations) > 0 || len(rep.Problems) > 0 || cleanup == nil
	if err := view.report(rep); err != nil {
		return err
	}
	if cleanup != nil {
		cleanup(rep.Kept)
	}
	if len(rep.Violations) > 0 {
		return fmt.Errorf("%w: %d violation%s; the data directory is kept at %s (agcore --data-dir %s doctor)",
			errViolations, len(rep.Violations), plural(len(rep.Violations)), dataDir, dataDir)
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%w: %s", errChaosProblem, strings.Join(rep.Problems, "; "))
	}
	return nil
}

// chaosDataDir returns the data directory of a run: dir, which must be
// empty or missing, or a new one under tmp (the system's temporary
// directory when empty). cleanup removes a new one unless keep; it is nil
// for dir.
func chaosDataDir(dir, tmp string) (string, func(keep bool), error) {
	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", nil, fmt.Errorf("--data-dir: %w", err)
		}
		if len(entries) > 0 {
			return "", nil, &usageError{fmt.Errorf("--data-dir %s is not empty: agcore chaos needs a directory of its own", dir)}
		}
		return dir, nil, nil
	}
	root, err := os.MkdirTemp(tmp, "agcore-chaos-")
	if err != nil {
		return "", nil, fmt.Errorf("data directory: %w", err)
	}
	return filepath.Join(root, "data"), func(keep bool) {
		if !keep {
			_ = os.RemoveAll(root)
		}
	}, nil
}

// runInProcess runs the workload in this process, without kills.
func runInProcess(ctx context.Context, a *app, o *chaosOptions, dataDir, ledger string, tally *chaosTally) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	w, err := buildWorkload(ctx, a, o, dataDir, ledger, 0, tally.add)
	if err != nil {
		return err
	}
	rt, err := actors.New(w.cfg)
	if err != nil {
		_ = w.close()
		return err
	}
	werr := runWorkload(ctx, rt, w, o, tally.add)
	if err := shutdownChaos(ctx, rt.Shutdown, shutdownTimeout, tally.add); err != nil {
		werr = errors.Join(werr, err)
	}
	return errors.Join(werr, w.close())
}

// shutdownChaos shuts a runtime down with shutdown (its Shutdown). A
// runtime that does not stop within timeout is a finding of the run,
// reported to out as a "problem"; only other errors are returned.
func shutdownChaos(ctx context.Context, shutdown func(context.Context) error, timeout time.Duration, out sink) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	err := shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		out(chaosEvent{Type: "problem", Text: fmt.Sprintf("the runtime did not shut down within %s: a session or a call did not stop", timeout)})
		return nil
	}
	return err
}

// runChaosWorker is the worker process of a kill loop: it runs the
// workload on the data directory, writing its events as JSON lines to
// standard output, shuts the runtime down and reports "done".
func runChaosWorker(cmd *cobra.Command, a *app, o *chaosOptions) error {
	ctx := cmd.Context()
	out := encodeEvents(cmd.OutOrStdout())
	w, err := buildWorkload(ctx, a, o, a.dataDir, a.dataDir+".ledger", o.worker, out)
	if err != nil {
		return err
	}
	rt, err := actors.New(w.cfg)
	if err != nil {
		_ = w.close()
		return err
	}
	werr := runWorkload(ctx, rt, w, o, out)
	if err := errors.Join(werr, shutdownChaos(ctx, rt.Shutdown, shutdownTimeout, out), w.close()); err != nil {
		return err
	}
	out(chaosEvent{Type: "done"})
	return nil
}

// checkChaos checks the data directory after a run and builds the report.
func checkChaos(ctx context.Context, o *chaosOptions, dataDir, ledger string, tally *chaosTally, fromConfig bool) (*chaosReport, error) {
	tally.mu.Lock()
	acks := slices.Clone(tally.acks)
	rerunnable := slices.Clone(tally.rerunnable)
	tally.mu.Unlock()
	check, err := chaos.CheckDir(ctx, dataDir, chaos.CheckOptions{
		Acknowledged: acks, Settled: true,
		Rerunnable: func(name string) bool { return slices.Contains(rerunnable, name) },
	})
	if err != nil {
		return nil, err
	}
	rep := newChaosReport(check, tally)
	if !fromConfig {
		if err := rep.checkLedger(ledger, dataDir); err != nil {
			return nil, err
		}
	}
	return rep, nil
}
