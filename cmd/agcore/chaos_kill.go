package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// chaosWorkerEnv marks a worker process of agcore chaos in its
// environment; a test binary that stands in for agcore runs the command
// line when it sees it (see TestMain).
const chaosWorkerEnv = "AGCORE_CHAOS_WORKER"

// maxIdleKills is how many workers in a row may be killed in their
// start-up (before they have opened every session) before the run gives
// up: the kills come faster than a start-up.
const maxIdleKills = 20

// stderrTail is how much of a worker's standard error is kept, to explain
// a worker that failed on its own.
const stderrTail = 16 << 10

// killLoop runs the workload in worker processes on dataDir, SIGKILLing
// each after a random delay in [o.killMin, o.killMax] and starting the
// next, until a worker runs every turn to its end.
func killLoop(ctx context.Context, a *app, o *chaosOptions, dataDir string, tally *chaosTally) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("agcore chaos --kill-every re-executes this program: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	nextDelay := killDelays(o.seed, o.killMin, o.killMax)
	idle := 0
	for worker := 1; ; worker++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		killed, err := runWorker(ctx, exe, a, o, dataDir, worker, nextDelay(), tally)
		if err != nil {
			return err
		}
		if !killed {
			return nil
		}
		if tally.restarted() {
			idle = 0
		} else {
			idle++
		}
		if idle >= maxIdleKills {
			return &usageError{fmt.Errorf("%d workers in a row were killed before they had opened their sessions: --kill-every %s is shorter than a worker's start-up; raise its minimum", idle, o.killEvery)}
		}
	}
}

// killDelays returns the source of the kill delays of a run: drawn in
// [lo, hi] from seed, the same sequence for the same seed.
func killDelays(seed uint64, lo, hi time.Duration) func() time.Duration {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	return func() time.Duration {
		if hi <= lo {
			return lo
		}
		return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
	}
}

// workerArgs is the command line of worker n.
func workerArgs(a *app, o *chaosOptions, dataDir string, n int) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	args := []string{"--data-dir", dataDir, "--log-format", "json", "--log-level", a.logLevel}
	if a.configPath != "" {
		args = append(args, "--config", a.configPath)
	}
	args = append(args, "chaos", "--worker", strconv.Itoa(n),
		"--sessions", strconv.Itoa(o.sessions), "--turns", strconv.Itoa(o.turns),
		"--fail-rate", f(o.failRate), "--malformed-rate", f(o.malformedRate), "--truncate-rate", f(o.truncateRate),
		"--slow-token-rate", f(o.slowTokenRate), "--panic-rate", f(o.panicRate), "--hang-rate", f(o.hangRate),
		"--tool-error-rate", f(o.toolErrorRate), "--slow-tool-rate", f(o.slowToolRate),
		"--append-fail-rate", f(o.appendFailRate), "--tool-timeout", o.toolTimeout.String(),
		"--seed", strconv.FormatUint(o.seed, 10))
	if a.configPath != "" {
		args = append(args, "--prompt", o.prompt)
		if o.model != "" {
			args = append(args, "--model", o.model)
		}
	}
	if o.brokenRerun {
		args = append(args, "--broken-rerun")
	}
	return args
}

// runWorker starts worker n, feeds its events to tally and SIGKILLs it
// after delay. It reports whether the worker was killed; a worker that
// ends on its own must have run every turn.
func runWorker(ctx context.Context, exe string, a *app, o *chaosOptions, dataDir string, n int, delay time.Duration, tally *chaosTally) (bool, error) {
	cmd := exec.CommandContext(ctx, exe, workerArgs(a, o, dataDir, n)...)
	cmd.Env = append(os.Environ(), chaosWorkerEnv+"=1")
	stderr := &tailBuffer{max: stderrTail}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return false, err
	}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("start worker %d: %w", n, err)
	}
	var (
		mu       sync.Mutex
		killedAt time.Time
	)
	timer := time.AfterFunc(delay, func() {
		mu.Lock()
		defer mu.Unlock()
		at := time.Now()
		if cmd.Process.Kill() == nil {
			killedAt = at
		}
	})
	done := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var ev chaosEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue // a line cut by the kill
		}
		done = done || ev.Type == "done"
		tally.add(ev)
	}
	werr := cmd.Wait()
	timer.Stop()
	mu.Lock()
	defer mu.Unlock()
	// A worker that had already exited when the kill was sent (a zombie
	// takes the signal) was not killed: only a signal ended a killed one.
	killed := !killedAt.IsZero() && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == -1
	switch {
	case ctx.Err() != nil:
		return false, context.Cause(ctx)
	case killed:
		tally.killed(killedAt)
		return true, nil
	case werr != nil || !done:
		return false, fmt.Errorf("worker %d failed on its own (%v):\n%s", n, werr, stderr.String())
	}
	return false, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
