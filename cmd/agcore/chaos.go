package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// The defaults of agcore chaos.
const (
	defaultChaosSessions = 20
	defaultChaosTurns    = 3
	// defaultChaosToolTimeout is the deadline of a tool call under chaos:
	// a hanging call ends there.
	defaultChaosToolTimeout = time.Second
	// maxChaosSessions bounds --sessions.
	maxChaosSessions = 10000
	// defaultChaosPrompt is what each turn asks with --config.
	defaultChaosPrompt = "Use your tools to check this project and report in one sentence."
)

// errViolations is returned by agcore chaos when the checker found a
// broken invariant.
var errViolations = errors.New("recovery invariants violated")

// errChaosProblem is returned by agcore chaos when the run itself went
// wrong in a way the journals do not show (a runtime that did not shut
// down).
var errChaosProblem = errors.New("the run found a problem")

// chaosOptions are the flags of agcore chaos.
type chaosOptions struct {
	sessions, turns int
	// Provider faults.
	failRate, malformedRate, truncateRate, slowTokenRate float64
	// Tool faults.
	panicRate, hangRate, toolErrorRate, slowToolRate float64
	// appendFailRate is the journal fault.
	appendFailRate float64
	// killEvery is the --kill-every range; killMin is 0 when no worker is
	// killed.
	killEvery        string
	killMin, killMax time.Duration
	toolTimeout      time.Duration
	seed             uint64
	jsonOut, keep    bool
	brokenRerun      bool
	prompt, model    string
	// worker numbers a worker process (hidden --worker); 0 in the parent.
	worker int
}

// newChaosCmd returns `agcore chaos`.
func newChaosCmd(a *app) *cobra.Command {
	o := &chaosOptions{}
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Run agents under injected faults and process kills, then check that nothing was lost",
		Long: `Run a workload of agent sessions under injected faults, optionally killing
and restarting the process that runs them at random moments, then check the
journals against the recovery invariants and print a report.

The workload is the built-in agent (a scripted model that calls a read-only
lookup and a non-idempotent charge in parallel each turn, then answers), or,
with --config, the configuration's own providers, tools and agent profiles
(point --model at a scripted provider, such as mock/scripted, to run
offline). Only the --config flag selects a configuration here: chaos does
not read AGCORE_CONFIG or the default file. Each of --sessions sessions runs --turns turns, all sessions at
once. Calls that need approval are refused: no one is there to approve.

Faults: --fail-rate (model calls rate limited, server error or timeout),
--malformed-rate and --truncate-rate (streamed replies spoilt),
--slow-token-rate (a late first token), --panic-rate, --hang-rate,
--tool-error-rate and --slow-tool-rate (tool calls), --append-fail-rate
(journal writes refused as a full disk refuses them). Each call draws at
most one fault of its kind.

--kill-every 300ms..1s runs the workload in a worker process (this program,
started again) and SIGKILLs it after a random delay in that range, again
and again, restarting it on the same data directory until every turn ran.

The checker then verifies that every acknowledged user message is
journaled once and in order, every tool call is answered exactly once (or
marked interrupted), no non-idempotent tool started twice for one call,
sequences are contiguous, and every turn ended. The built-in charge also
keeps a ledger: a charge made twice is a violation too.

The data directory is a new temporary one, removed after a clean run
unless --keep; a run with violations keeps it for inspection (agcore
doctor, agcore sessions). --data-dir names an empty directory to use
instead.

The exit code is 0 only when no invariant is violated; 1 otherwise.
--seed repeats a run's faults and kill delays (the order in which
concurrent calls draw them still depends on scheduling).`,
		Example: `  agcore chaos
  agcore chaos --sessions 100 --turns 5 --fail-rate 0.2 --panic-rate 0.1 --hang-rate 0.05 --kill-every 300ms..1s
  agcore chaos --seed 42 --json | jq .violations
  agcore chaos --config ./agcore.yaml --model mock/scripted --sessions 10 --kill-every 200ms..2s`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return &usageError{err}
			}
			if a.configPath == "" {
				for _, flag := range []string{"model", "prompt"} {
					if cmd.Flags().Changed(flag) {
						return &usageError{fmt.Errorf("--%s applies to the agents of a configuration: add --config FILE", flag)}
					}
				}
			}
			if !cmd.Flags().Changed("seed") && o.worker == 0 {
				o.seed = rand.Uint64() >> 11 // printed in the report, to repeat the run
			}
			if o.worker > 0 {
				return runChaosWorker(cmd, a, o)
			}
			return runChaos(cmd, a, o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.sessions, "sessions", defaultChaosSessions, "sessions that run at once")
	f.IntVar(&o.turns, "turns", defaultChaosTurns, "turns per session, one after the other")
	f.Float64Var(&o.failRate, "fail-rate", 0, "fraction of model calls that fail: rate limited, server error or timeout")
	f.Float64Var(&o.malformedRate, "malformed-rate", 0, "fraction of model replies with an undecodable chunk (not retryable)")
	f.Float64Var(&o.truncateRate, "truncate-rate", 0, "fraction of model replies cut before their end")
	f.Float64Var(&o.slowTokenRate, "slow-token-rate", 0, "fraction of model replies whose first token comes a second late")
	f.Float64Var(&o.panicRate, "panic-rate", 0, "fraction of tool calls that panic")
	f.Float64Var(&o.hangRate, "hang-rate", 0, "fraction of tool calls that hang until their deadline (--tool-timeout)")
	f.Float64Var(&o.toolErrorRate, "tool-error-rate", 0, "fraction of tool calls that fail with an error")
	f.Float64Var(&o.slowToolRate, "slow-tool-rate", 0, "fraction of tool calls that start 100ms late")
	f.Float64Var(&o.appendFailRate, "append-fail-rate", 0, "fraction of journal writes refused as a full disk refuses them")
	f.StringVar(&o.killEvery, "kill-every", "", "run the workload in a worker process and SIGKILL it after a random delay in this range, such as 300ms..1s (default: no kills, one process)")
	f.DurationVar(&o.toolTimeout, "tool-timeout", defaultChaosToolTimeout, "deadline of a tool call")
	f.Uint64Var(&o.seed, "seed", 0, "seed of the faults and kill delays (default: a random one, printed in the report)")
	f.BoolVar(&o.jsonOut, "json", false, "print the report as JSON")
	f.BoolVar(&o.keep, "keep", false, "keep the temporary data directory after a clean run")
	f.BoolVar(&o.brokenRerun, "broken-rerun", false, "self-test of the checker: make every non-idempotent tool claim to be idempotent, so that a restart runs it again; the run must then fail")
	f.StringVar(&o.prompt, "prompt", defaultChaosPrompt, "what each turn asks, with --config")
	f.StringVar(&o.model, "model", "", `model to use with --config, as "provider/model" (default: the configuration's)`)
	f.IntVar(&o.worker, "worker", 0, "internal: the number of a worker process")
	_ = f.MarkHidden("worker")
	return cmd
}

// validate checks the flags and parses --kill-every.
func (o *chaosOptions) validate() error {
	if o.sessions < 1 || o.sessions > maxChaosSessions {
		return fmt.Errorf("--sessions must be between 1 and %d, got %d", maxChaosSessions, o.sessions)
	}
	if o.turns < 1 {
		return fmt.Errorf("--turns must be at least 1, got %d", o.turns)
	}
	for _, r := range []struct {
		flag string
		v    float64
	}{{"--fail-rate", o.failRate}, {"--malformed-rate", o.malformedRate}, {"--truncate-rate", o.truncateRate},
		{"--slow-token-rate", o.slowTokenRate}, {"--panic-rate", o.panicRate}, {"--hang-rate", o.hangRate},
		{"--tool-error-rate", o.toolErrorRate}, {"--slow-tool-rate", o.slowToolRate}, {"--append-fail-rate", o.appendFailRate}} {
		if !(r.v >= 0 && r.v <= 1) {
			return fmt.Errorf("%s must be a fraction between 0 and 1, got %v", r.flag, r.v)
		}
	}
	if s := o.failRate + o.malformedRate + o.truncateRate + o.slowTokenRate; s > 1 {
		return fmt.Errorf("--fail-rate, --malformed-rate, --truncate-rate and --slow-token-rate add up to %v, more than 1", s)
	}
	if s := o.panicRate + o.hangRate + o.toolErrorRate + o.slowToolRate; s > 1 {
		return fmt.Errorf("--panic-rate, --hang-rate, --tool-error-rate and --slow-tool-rate add up to %v, more than 1", s)
	}
	if o.toolTimeout <= 0 {
		return fmt.Errorf("--tool-timeout must be positive, got %v", o.toolTimeout)
	}
	if o.killEvery != "" {
		lo, hi, err := parseKillEvery(o.killEvery)
		if err != nil {
			return err
		}
		o.killMin, o.killMax = lo, hi
	}
	return nil
}

// parseKillEvery parses "300ms..1s" (or a single duration, "500ms").
func parseKillEvery(s string) (lo, hi time.Duration, err error) {
	a, b, ranged := strings.Cut(s, "..")
	if !ranged {
		b = a
	}
	if lo, err = time.ParseDuration(strings.TrimSpace(a)); err == nil {
		hi, err = time.ParseDuration(strings.TrimSpace(b))
	}
	switch {
	case err != nil:
		return 0, 0, fmt.Errorf("--kill-every %q: want a range of durations such as 300ms..1s: %w", s, err)
	case lo <= 0 || hi < lo:
		return 0, 0, fmt.Errorf("--kill-every %q: want 0 < min <= max, such as 300ms..1s", s)
	}
	return lo, hi, nil
}
