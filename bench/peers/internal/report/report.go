// Package report turns the JSON results of many peer runs into markdown
// tables: the median of every figure over the repetitions of a peer at a
// concurrency, each shown with its ratio to a baseline peer measured in
// the same session.
package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agcore/agcore/bench/peers/internal/harness"
)

// ErrNoBaseline is wrapped by Write's error when a peer's baseline has no
// result at some concurrency.
var ErrNoBaseline = errors.New("report: no result for the baseline")

// Read decodes the results in r, one JSON object per line; blank lines are
// skipped.
func Read(r io.Reader) ([]harness.Result, error) {
	var out []harness.Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var res harness.Result
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			return nil, fmt.Errorf("report: line %d: %w", n, err)
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return out, nil
}

// Summary is the median of every figure over the runs of one peer at one
// concurrency.
type Summary struct {
	Peer        string
	Concurrency int
	// Runs is the number of runs summarised.
	Runs int
	// The medians.
	CPUMicrosPerTurn, AllocsPerTurn, BytesPerTurn float64
	TurnsPerSecond, P50Micros, P99Micros          float64
	PeakRSSKiB                                    float64
}

// Summarise groups results by peer and concurrency and takes the medians,
// ordered by concurrency, then by the order in which peers first appear.
func Summarise(results []harness.Result) []Summary {
	type key struct {
		peer string
		c    int
	}
	groups := map[key][]harness.Result{}
	var order []key
	peerRank := map[string]int{}
	for _, r := range results {
		k := key{r.Peer, r.Concurrency}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		if _, ok := peerRank[r.Peer]; !ok {
			peerRank[r.Peer] = len(peerRank)
		}
		groups[k] = append(groups[k], r)
	}
	slices.SortStableFunc(order, func(a, b key) int {
		if a.c != b.c {
			return a.c - b.c
		}
		return peerRank[a.peer] - peerRank[b.peer]
	})
	out := make([]Summary, 0, len(order))
	for _, k := range order {
		g := groups[k]
		med := func(f func(harness.Result) float64) float64 {
			v := make([]float64, len(g))
			for i, r := range g {
				v[i] = f(r)
			}
			return Median(v)
		}
		out = append(out, Summary{
			Peer: k.peer, Concurrency: k.c, Runs: len(g),
			CPUMicrosPerTurn: med(func(r harness.Result) float64 { return r.CPUMicrosPerTurn }),
			AllocsPerTurn:    med(func(r harness.Result) float64 { return r.AllocsPerTurn }),
			BytesPerTurn:     med(func(r harness.Result) float64 { return r.BytesPerTurn }),
			TurnsPerSecond:   med(func(r harness.Result) float64 { return r.TurnsPerSecond }),
			P50Micros:        med(func(r harness.Result) float64 { return r.P50Micros }),
			P99Micros:        med(func(r harness.Result) float64 { return r.P99Micros }),
			PeakRSSKiB:       med(func(r harness.Result) float64 { return float64(r.PeakRSSKiB) }),
		})
	}
	return out
}

// Median returns the median of v (the mean of the two middle values for an
// even count), or 0 for none. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Options says which peer each peer is compared with.
type Options struct {
	// Baseline is the peer every ratio is relative to. Empty means "bare".
	Baseline string
	// Against overrides the baseline of some peers: peer name to baseline
	// name (such as a streaming peer to a streaming baseline).
	Against map[string]string
	// Order lists peers in the order their rows appear; peers it does not
	// name follow in the order of sums. Empty keeps the order of sums.
	Order []string
}

// Write prints one markdown table per concurrency: for each peer the
// medians, each followed by its ratio to the peer's baseline at the same
// concurrency.
func Write(w io.Writer, sums []Summary, o Options) error {
	if o.Baseline == "" {
		o.Baseline = "bare"
	}
	byKey := map[string]Summary{}
	var levels []int
	for _, s := range sums {
		byKey[fmt.Sprint(s.Peer, "@", s.Concurrency)] = s
		if !slices.Contains(levels, s.Concurrency) {
			levels = append(levels, s.Concurrency)
		}
	}
	rank := func(peer string) int {
		if i := slices.Index(o.Order, peer); i >= 0 {
			return i
		}
		return len(o.Order)
	}
	sums = slices.Clone(sums)
	slices.SortStableFunc(sums, func(a, b Summary) int { return rank(a.Peer) - rank(b.Peer) })
	var b strings.Builder
	for i, c := range levels {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Concurrency %d (medians; ratio to the baseline in parentheses, lower is better except turns/s)\n\n", c)
		b.WriteString("| peer | vs | runs | client CPU µs/turn | allocs/turn | KB alloc/turn | turns/s | p50 ms | p99 ms | peak RSS MB |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
		for _, s := range sums {
			if s.Concurrency != c {
				continue
			}
			base := o.Baseline
			if a, ok := o.Against[s.Peer]; ok {
				base = a
			}
			bs, ok := byKey[fmt.Sprint(base, "@", c)]
			if !ok {
				return fmt.Errorf("%w %q at concurrency %d", ErrNoBaseline, base, c)
			}
			vs := base
			if s.Peer == base {
				vs = "—"
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", s.Peer, vs, s.Runs,
				cell(s.CPUMicrosPerTurn, bs.CPUMicrosPerTurn, 1, "%.0f"),
				cell(s.AllocsPerTurn, bs.AllocsPerTurn, 1, "%.0f"),
				cell(s.BytesPerTurn, bs.BytesPerTurn, 1024, "%.1f"),
				cell(s.TurnsPerSecond, bs.TurnsPerSecond, 1, "%.0f"),
				cell(s.P50Micros, bs.P50Micros, 1000, "%.2f"),
				cell(s.P99Micros, bs.P99Micros, 1000, "%.2f"),
				cell(s.PeakRSSKiB, bs.PeakRSSKiB, 1024, "%.1f"))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell formats v/unit with format, followed by its ratio to base.
func cell(v, base, unit float64, format string) string {
	s := fmt.Sprintf(format, v/unit)
	if base > 0 {
		s += fmt.Sprintf(" (%.2f×)", v/base)
	}
	return s
}
