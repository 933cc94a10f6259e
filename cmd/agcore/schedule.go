package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/schedule"
)

// newScheduleCmd returns `agcore schedule` and its subcommands.
func newScheduleCmd(a *app) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "List, add and remove the cron schedules of the data directory",
		Long: `Manage scheduled agent runs: cron schedules kept in the data directory
(--data-dir) that submit a prompt to a session at their fire times. agcore
serve fires them, journaling each fire before its run starts; no other
command does. While agcore serve runs on the same data directory, manage
them through its API (/v1/schedules) instead: the data directory is its
own until it stops. See docs/schedules.md.`,
		Example: `  agcore schedule add --cron "0 9 * * 1-5" --tz Europe/Paris --prompt "Summarise yesterday's tickets" --session reports
  agcore schedule add --cron "@every 30m" --prompt "Check the build" --max-runs 10
  agcore schedule list
  agcore schedule rm nightly`,
		Args: unknownCommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().BoolVar(&jsonOut, "json", false, "print JSON lines instead of text")
	cmd.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: "List the schedules with their next fire time and runs",
			Long: `List every schedule of the data directory, sorted by id: its expression and
time zone, next fire time (or why it ended), runs so far, target session
(or "fresh" for a new session per run) and prompt.`,
			Example: "  agcore schedule list\n  agcore schedule list --json | jq -r .id",
			Args:    noArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return a.withSchedules(cmd.Context(), false, func(_ *config.Config, s *schedule.Store) error {
					return listSchedules(cmd, s, jsonOut)
				})
			},
		},
		newScheduleAddCmd(a, &jsonOut),
		&cobra.Command{
			Use:     "rm ID...",
			Short:   "Remove schedules",
			Long:    "Remove the schedules named, so that they fire no more. Their journals are kept.",
			Example: "  agcore schedule rm nightly",
			Args:    cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return a.withSchedules(cmd.Context(), false, func(_ *config.Config, s *schedule.Store) error {
					for _, id := range args {
						if err := s.Delete(cmd.Context(), id); err != nil {
							if errors.Is(err, schedule.ErrNotFound) {
								return fmt.Errorf("no schedule %q in the data directory (agcore schedule list shows them)", id)
							}
							return err
						}
						fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", id)
					}
					return nil
				})
			},
		},
	)
	return cmd
}

// scheduleFlags maps the fields of a schedule.Spec to the flags of
// schedule add.
var scheduleFlags = map[string]string{
	"id": "--id", "name": "--name", "expr": "--cron", "time_zone": "--tz", "prompt": "--prompt", "agent": "--agent",
	"session": "--session", "end_at": "--until", "max_runs": "--max-runs", "missed": "--missed", "overlap": "--overlap",
}

// newScheduleAddCmd returns `agcore schedule add`.
func newScheduleAddCmd(a *app, jsonOut *bool) *cobra.Command {
	var (
		id, until string
		spec      schedule.Spec
		missed    string
		overlap   string
	)
	cmd := &cobra.Command{
		Use:   "add --cron EXPR --prompt TEXT",
		Short: "Add a schedule",
		Long: `Add a schedule that submits --prompt at each fire time of --cron.

--cron    five fields, minute hour day-of-month month day-of-week ("0 9 * * 1-5"),
          or @yearly, @monthly, @weekly, @daily, @hourly, "@every 10m"
--tz      IANA time zone of the fields (default UTC)
--session the session every run goes to, so that its history accumulates;
          without it, each run has a fresh session named <id>-<run number>
--agent   agent profile of the runs (default: the session's own)
--until   end date, RFC 3339; --max-runs ends it after that many runs
--missed  fire times that passed while agcore serve was down: skip (default)
          or run-once
--overlap a fire time that comes while the previous run goes on: skip
          (default) or queue`,
		Example: `  agcore schedule add --cron "0 9 * * 1-5" --tz Europe/Paris --prompt "Summarise yesterday's tickets" --session reports
  agcore schedule add --id nightly --cron @daily --prompt "Clean the workspace" --missed run-once`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec.Missed, spec.Overlap = schedule.MissedPolicy(missed), schedule.OverlapPolicy(overlap)
			if until != "" {
				end, err := time.Parse(time.RFC3339, until)
				if err != nil {
					return &usageError{fmt.Errorf("--until: %q is not an RFC 3339 time such as 2030-01-31T18:00:00Z", until)}
				}
				spec.EndAt = end
			}
			if _, err := spec.Validate(time.Now()); err != nil {
				return specUsageError(err)
			}
			return a.withSchedules(cmd.Context(), true, func(cfg *config.Config, s *schedule.Store) error {
				if agents := agentNames(cfg); spec.Agent != "" && !slices.Contains(agents, spec.Agent) {
					return &usageError{fmt.Errorf("--agent: unknown agent %q (agents: %s)", spec.Agent, strings.Join(agents, ", "))}
				}
				sc, err := s.Create(cmd.Context(), id, spec, "cli")
				if err != nil {
					if errors.Is(err, schedule.ErrExists) {
						return fmt.Errorf("--id: a schedule %q exists (agcore schedule rm %s removes it)", id, id)
					}
					return specUsageError(err)
				}
				if *jsonOut {
					return json.NewEncoder(cmd.OutOrStdout()).Encode(sc)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "scheduled %s: next run %s (%s)\n", sc.ID, sc.NextFire.Format(time.RFC3339), target(sc))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec.Expr, "cron", "", `cron expression: five fields, or a descriptor such as @daily or "@every 10m" (required)`)
	f.StringVar(&spec.Prompt, "prompt", "", "the user message of each run (required)")
	f.StringVar(&id, "id", "", "the schedule's id: letters, digits, - and _ (default: generated)")
	f.StringVar(&spec.Name, "name", "", "a label")
	f.StringVar(&spec.TimeZone, "tz", "", "IANA time zone of the cron fields, such as Europe/Paris (default UTC)")
	f.StringVar(&spec.Session, "session", "", "session every run is submitted to (default: a fresh session per run)")
	f.StringVar(&spec.Agent, "agent", "", "agent profile of the runs (default: the session's)")
	f.StringVar(&until, "until", "", "end date, RFC 3339: no run after it")
	f.IntVar(&spec.MaxRuns, "max-runs", 0, "end after this many runs (0: no limit)")
	f.StringVar(&missed, "missed", "", "fire times missed while agcore serve was down: skip (default) or run-once")
	f.StringVar(&overlap, "overlap", "", "a fire time while the previous run goes on: skip (default) or queue")
	return cmd
}

// specUsageError names the flag of a refused schedule field.
func specUsageError(err error) error {
	fe, ok := errors.AsType[*schedule.FieldError](err)
	if !ok {
		return err
	}
	flag := scheduleFlags[fe.Field]
	if flag == "" {
		flag = fe.Field
	}
	return &usageError{fmt.Errorf("%s: %s", flag, fe.Reason)}
}

// agentNames returns the agent profiles of cfg.
func agentNames(cfg *config.Config) []string {
	if len(cfg.Agents) == 0 {
		return []string{"default"}
	}
	names := make([]string, len(cfg.Agents))
	for i, ag := range cfg.Agents {
		names[i] = ag.Name
	}
	return names
}

// target describes where sc's runs go.
func target(sc schedule.Schedule) string {
	if sc.Session == "" {
		return "a fresh session per run"
	}
	return "session " + sc.Session
}

// withSchedules opens the schedules of the data directory, creating the
// directory when create is set, and calls f.
func (a *app) withSchedules(ctx context.Context, create bool, f func(*config.Config, *schedule.Store) error) error {
	cfg, err := a.loadConfig(config.Overrides{})
	if err != nil {
		return err
	}
	if create {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
	} else if _, err := os.Stat(cfg.DataDir); err != nil {
		return fmt.Errorf("%w at %s (add a schedule first, or set --data-dir): %w", errNoDataDir, cfg.DataDir, err)
	}
	store, err := memory.Open(memory.Options{Dir: cfg.DataDir, Logger: a.log})
	if errors.Is(err, memory.ErrLocked) {
		return fmt.Errorf("%w; while agcore serve runs on this data directory, manage schedules through its API (/v1/schedules)", err)
	}
	if err != nil {
		return err
	}
	return errors.Join(f(cfg, schedule.New(store, schedule.Options{})), store.Close())
}

// listSchedules prints every schedule.
func listSchedules(cmd *cobra.Command, s *schedule.Store, jsonOut bool) error {
	all, err := s.List(cmd.Context())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if jsonOut {
		enc := json.NewEncoder(out)
		for _, sc := range all {
			if err := enc.Encode(sc); err != nil {
				return err
			}
		}
		return nil
	}
	if len(all) == 0 {
		fmt.Fprintln(out, "no schedules (agcore schedule add creates one)")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCRON\tTZ\tNEXT\tRUNS\tSESSION\tPROMPT")
	for _, sc := range all {
		next := "ended: " + sc.EndReason
		if sc.State == schedule.StateActive {
			next = sc.NextFire.Format(time.RFC3339)
		}
		tz, sess := sc.TimeZone, sc.Session
		if tz == "" {
			tz = "UTC"
		}
		if sess == "" {
			sess = "fresh"
		}
		runs := fmt.Sprint(sc.Runs)
		if sc.MaxRuns > 0 {
			runs += fmt.Sprintf("/%d", sc.MaxRuns)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sc.ID, sc.Expr, tz, next, runs, sess, oneLine(sc.Prompt, 60))
	}
	return tw.Flush()
}
