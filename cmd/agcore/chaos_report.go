package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agcore/agcore/chaos"
)

// chaosReport is what agcore chaos reports: the run, the faults, the kills,
// and the checker's findings.
type chaosReport struct {
	Seed            uint64 `json:"seed"`
	Sessions        int    `json:"sessions"`
	TurnsPerSession int    `json:"turns_per_session"`
	// DataDir is the data directory of the run; Kept says whether it is
	// still there.
	DataDir string        `json:"data_dir"`
	Kept    bool          `json:"kept"`
	Wall    time.Duration `json:"wall_ns"`
	// Turns counts the turns journaled as ended, by outcome, and
	// FailReasons the failed ones by reason; OpenTurns counts those left
	// open (none after a clean end).
	Turns       map[string]int `json:"turns"`
	FailReasons map[string]int `json:"fail_reasons,omitempty"`
	OpenTurns   int            `json:"open_turns"`
	// Refused counts the submissions refused before their turn started
	// (a journal write refused), each tried again.
	Refused int `json:"refused"`
	// Faults counts the injected faults by kind.
	Faults map[chaos.FaultKind]int64 `json:"faults"`
	// Kills and Restarts count the worker processes killed and started
	// again; Recovery is the time from a kill to the next worker's
	// sessions being open and resumed.
	Kills       int           `json:"kills"`
	Restarts    int           `json:"restarts"`
	RecoveryP50 time.Duration `json:"recovery_p50_ns"`
	RecoveryP99 time.Duration `json:"recovery_p99_ns"`
	// ToolCalls, Reruns and Interrupted are the checker's counts: calls
	// made, calls of re-runnable tools run again after a restart, calls
	// answered as interrupted instead.
	ToolCalls    int `json:"tool_calls"`
	Reruns       int `json:"reruns"`
	Interrupted  int `json:"interrupted"`
	Acknowledged int `json:"acknowledged"`
	Journals     int `json:"journals"`
	// Charges counts the lines of the built-in charge tool's ledger.
	Charges int `json:"charges,omitempty"`
	// Violations are the broken invariants; the run passes when empty.
	Violations []chaos.Violation `json:"violations"`
	// Problems are what went wrong beyond the journals, such as a runtime
	// that did not shut down; the run passes only when empty too.
	Problems []string `json:"problems,omitempty"`
}

// newChaosReport builds the report of a run from the checker's report and
// the tally.
func newChaosReport(check *chaos.Report, tally *chaosTally) *chaosReport {
	tally.mu.Lock()
	defer tally.mu.Unlock()
	rep := &chaosReport{
		Turns: check.Turns, FailReasons: check.FailReasons, OpenTurns: check.OpenTurns,
		Refused: tally.refused, Faults: maps.Clone(tally.faults), Problems: slices.Clone(tally.problems),
		Kills: tally.kills, Restarts: tally.restarts,
		ToolCalls: check.ToolCalls, Reruns: check.Reruns, Interrupted: check.Interrupted,
		Acknowledged: check.Acknowledged, Journals: check.Sessions, Violations: check.Violations,
	}
	rep.RecoveryP50, rep.RecoveryP99 = percentile(tally.recoveries, 50), percentile(tally.recoveries, 99)
	return rep
}

// percentile returns the p-th percentile of ds (nearest rank), 0 for none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

// checkLedger reads the built-in charge tool's ledger and adds a
// violation for each call charged more than once.
func (rep *chaosReport) checkLedger(ledger, dataDir string) error {
	data, err := os.ReadFile(ledger)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	seen := map[string]int{}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue // a line cut by a kill: the charge did not answer
		}
		rep.Charges++
		key := line
		if seen[key]++; seen[key] == 2 {
			turn, _ := strconv.Atoi(f[1])
			rep.Violations = append(rep.Violations, chaos.Violation{Session: f[0], Invariant: chaos.InvToolStartedOnce,
				Problem: fmt.Sprintf("charge ran twice for call %s of turn %d (ledger %s)", f[2], turn, ledger)})
		}
	}
	return nil
}

// failed returns the number of turns that ended other than completed.
func (rep *chaosReport) failed() int {
	n := 0
	for outcome, c := range rep.Turns {
		if outcome != "completed" {
			n += c
		}
	}
	return n
}

// ended returns the number of turns that ended.
func (rep *chaosReport) ended() int {
	n := 0
	for _, c := range rep.Turns {
		n += c
	}
	return n
}

// countsText lists counts as "a 3, b 2", largest first.
func countsText[K ~string](m map[K]int64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b K) int {
		if m[a] != m[b] {
			return int(m[b] - m[a])
		}
		return strings.Compare(string(a), string(b))
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", strings.ReplaceAll(string(k), "_", " "), m[k]))
	}
	return strings.Join(parts, ", ")
}

func int64s[K comparable](m map[K]int) map[K]int64 {
	out := make(map[K]int64, len(m))
	for k, v := range m {
		out[k] = int64(v)
	}
	return out
}

// maxListedViolations bounds the violations the text report lists.
const maxListedViolations = 20

// printChaosReport writes the report as text.
func printChaosReport(w io.Writer, t term, rep *chaosReport) {
	var b strings.Builder
	row := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "%s %s\n", t.bold(fmt.Sprintf("%-10s", name)), fmt.Sprintf(format, args...))
	}
	turns := fmt.Sprintf("%d of %d ended: %d completed, %d failed", rep.ended(), rep.Sessions*rep.TurnsPerSession, rep.Turns["completed"], rep.failed())
	if len(rep.FailReasons) > 0 {
		turns += " (" + countsText(int64s(rep.FailReasons)) + ")"
	}
	if rep.Refused > 0 {
		turns += fmt.Sprintf("; %d submissions refused and tried again", rep.Refused)
	}
	row("turns", "%s", turns)
	var total int64
	for _, n := range rep.Faults {
		total += n
	}
	if total > 0 {
		row("faults", "%d injected: %s", total, countsText(rep.Faults))
	} else {
		row("faults", "none injected")
	}
	if rep.Kills > 0 {
		row("process", "%d kill%s, %d restart%s, recovery p50 %s, p99 %s", rep.Kills, plural(rep.Kills), rep.Restarts, plural(rep.Restarts),
			formatDuration(rep.RecoveryP50), formatDuration(rep.RecoveryP99))
	} else {
		row("process", "not killed (--kill-every kills and restarts it)")
	}
	row("tools", "%d calls, %d re-run after a restart (idempotent or read-only), %d answered as interrupted", rep.ToolCalls, rep.Reruns, rep.Interrupted)
	if rep.Charges > 0 {
		row("ledger", "%d charges", rep.Charges)
	}
	row("checked", "%d journals, %d acknowledged messages", rep.Journals, rep.Acknowledged)
	row("wall", "%s · seed %d · data %s%s", formatDuration(rep.Wall), rep.Seed, rep.DataDir, map[bool]string{true: " (kept)", false: " (removed)"}[rep.Kept])
	for _, p := range rep.Problems {
		b.WriteString(t.red(markFail+" "+p) + "\n")
	}
	if len(rep.Violations) == 0 {
		b.WriteString(t.green(markOK+" no invariant violated") + "\n")
	} else {
		b.WriteString(t.red(fmt.Sprintf("%s %d invariant violation%s", markFail, len(rep.Violations), plural(len(rep.Violations)))) + "\n")
		for i, v := range rep.Violations {
			if i == maxListedViolations {
				fmt.Fprintf(&b, "  ... and %d more (--json lists them all)\n", len(rep.Violations)-i)
				break
			}
			fmt.Fprintf(&b, "  %s\n", v)
		}
	}
	_, _ = io.WriteString(w, b.String())
}
