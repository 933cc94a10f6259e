package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/internal/benchsuite"
)

// newBenchCmd returns `agcore bench`.
func newBenchCmd(a *app) *cobra.Command {
	var (
		only          []string
		quick, asJSON bool
		dir           string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the runtime against baselines run alongside it",
		Long: `Run agcore's benchmark workloads and print one table per workload.

Every figure is a rate, or a ratio against a baseline measured in the same
run, in this process: the two sides alternate after a warm-up and the tables
show medians. The machine (Go version, OS and architecture, CPUs, CPU model,
memory, GOMAXPROCS, date) heads the report. Nothing leaves the machine: the
model is a scripted one, served over HTTP on 127.0.0.1 where a workload needs
HTTP.

Workloads (--only takes a comma-separated list of them):
  turn-overhead  a turn through the runtime vs a bare go-openai loop making
                 the same requests and tool call to the same mock server
  fan-out        1, 4, 16 and 64 parallel tool calls per reply, turn time
                 relative to one call
  sessions       1,000 and 10,000 concurrent sessions: turns/s, p50/p99 turn
                 latency, peak RSS, RSS per idle session
  journal        journal appends/s with sync, batch and no fsync
  retrieval      knowledge queries over 100,000 generated pages (10,000 with
                 --quick), against an exhaustive search
  recovery       restart and resume 1,000 sessions (200 with --quick),
                 against loading their journals directly
  idle-sessions  RSS and heap per idle session (10-message history, journal
                 on disk) at 1,000 and 10,000 sessions (200 and 1,000 with
                 --quick), resident and passivated, and a turn on passivated
                 sessions

The full run takes several minutes; --quick takes under a minute. Data
directories are created under --dir and removed afterwards.`,
		Example: `  agcore bench --quick
  agcore bench --only turn-overhead,fan-out
  agcore bench --json > bench.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var names []string
			for _, n := range only {
				if n = strings.TrimSpace(n); n != "" {
					names = append(names, n)
				}
			}
			rep, err := benchsuite.Run(cmd.Context(), benchsuite.Options{
				Only: names, Quick: quick, Dir: dir, Logger: component(a.log, "bench"),
			})
			if errors.Is(err, benchsuite.ErrUnknownWorkload) {
				return &usageError{err}
			}
			if err != nil {
				return err
			}
			if asJSON {
				return rep.WriteJSON(cmd.OutOrStdout())
			}
			return rep.WriteText(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&only, "only", nil, "run only these workloads: "+strings.Join(benchsuite.Workloads(), ", "))
	f.BoolVar(&quick, "quick", false, "run the workloads in their quick sizes (under a minute in all)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.StringVar(&dir, "dir", "", "parent of the temporary data directories (default: the system's temporary directory)")
	return cmd
}
