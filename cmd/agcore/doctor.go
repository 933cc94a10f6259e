package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/knowledge"
)

// errDamaged is returned by doctor when it found damage it did not repair.
var errDamaged = errors.New("the data directory is damaged")

// newDoctorCmd returns `agcore doctor`.
func newDoctorCmd(a *app) *cobra.Command {
	var repair, jsonOut bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the data directory: journals, snapshots, knowledge index, files",
		Long: `Check everything agcore keeps in the data directory (--data-dir) without
changing it: the table files against their checksums, every session's journal
(each entry's checksum, sequence numbers without gaps, decodable events, the
snapshots against the entries they cover, and the recovery invariants of
docs/chaos.md: every call answered once, every turn ended once or
resumable, no client turn id run twice), the knowledge index against its
pages, and the environment. It prints a report and exits with 0 when nothing
is damaged, 1 with the list of what is.

The store is opened read-only. One that was not closed cleanly (the process
was killed) is opened for writing instead, to replay its write-ahead log as
the next start would; the report says so.

--repair makes the rest of the store usable: a damaged session's journal is
quarantined (moved aside within the store, never deleted: its id is free for
a new session), a damaged snapshot is rewritten from its journal, and the
knowledge index is rebuilt from the pages. Damaged table files cannot be
repaired in place: restore the latest backup (agcore restore).

agcore doctor needs the data directory to itself: stop the server first.`,
		Example: `  agcore doctor
  agcore doctor --data-dir /var/lib/agcore --json | jq .damaged
  agcore doctor --repair`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig(config.Overrides{})
			if err != nil {
				return err
			}
			if _, err := os.Stat(cfg.DataDir); err != nil {
				return fmt.Errorf("%w at %s (set --data-dir): %w", errNoDataDir, cfg.DataDir, err)
			}
			rep, err := a.doctor(cmd.Context(), cfg.DataDir, repair)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if jsonOut {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				printDoctor(w, termFor(w, a.getenv), rep)
			}
			if len(rep.Damaged) > 0 {
				hint := "run `agcore doctor --repair` to set the damaged sessions aside"
				if len(rep.Invariants) == len(rep.Damaged) {
					hint = "the journals replay but break recovery invariants (docs/chaos.md): the runtime that wrote them has a bug"
				}
				if !rep.Repairable {
					hint = "restore the latest backup (agcore restore) into a new data directory"
				}
				return fmt.Errorf("%w: %s (%s)", errDamaged, fmt.Sprintf("%d problem%s", len(rep.Damaged), plural(len(rep.Damaged))), hint)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&repair, "repair", false, "quarantine damaged sessions, rewrite damaged snapshots, rebuild the knowledge index")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the report as JSON")
	return cmd
}

// doctorReport is what doctor found (and, with --repair, did).
type doctorReport struct {
	DataDir string `json:"data_dir"`
	// Mode is how the store was opened: "read-only", "replayed" (read-write,
	// to replay the write-ahead log of a store not closed cleanly) or
	// "repair".
	Mode string `json:"mode"`
	// Files are problems with the files of the data directory.
	Files []string `json:"files,omitempty"`
	// Recovered is what opening the store found and did.
	Recovered []memory.Recovery `json:"recovered,omitempty"`
	// Sessions counts the journals checked; Reports holds those with
	// findings.
	Sessions int                    `json:"sessions"`
	Reports  []memory.SessionReport `json:"reports,omitempty"`
	// Invariants are the recovery invariants that the sound journals
	// break (chaos.Check): a call answered twice, a turn ended twice, a
	// client turn id journaled twice, a turn that cannot resume.
	Invariants []chaos.Violation `json:"invariants,omitempty"`
	// Knowledge is the check of the knowledge index, nil when the store
	// could not be opened.
	Knowledge   *knowledge.IndexReport `json:"knowledge,omitempty"`
	Environment []envCheck             `json:"environment"`
	Quarantined []memory.Quarantined   `json:"quarantined,omitempty"`
	Repairs     []string               `json:"repairs,omitempty"`
	// Damaged lists what is damaged, one line each; empty when nothing is.
	Damaged []string `json:"damaged"`
	// Repairable is false when some damage is beyond --repair (table
	// files, the MANIFEST).
	Repairable bool `json:"repairable"`
}

// doctor checks (and with repair, repairs) the store in dir.
func (a *app) doctor(ctx context.Context, dir string, repair bool) (*doctorReport, error) {
	rep := &doctorReport{DataDir: dir, Mode: "read-only", Repairable: true, Damaged: []string{}}
	rep.Environment = environmentChecks(ctx, dir)
	opts := memory.Options{Dir: dir, Logger: a.log, ReadOnly: !repair}
	if repair {
		rep.Mode = "repair"
	}
	store, err := memory.Open(opts)
	if errors.Is(err, memory.ErrNeedsReplay) {
		opts.ReadOnly = false
		rep.Mode = "replayed"
		store, err = memory.Open(opts)
	}
	if errors.Is(err, memory.ErrLocked) {
		return nil, fmt.Errorf("%w: agcore doctor needs it to itself; stop the process using it and run doctor again", err)
	}
	if errors.Is(err, memory.ErrCorruptStore) {
		rep.Repairable = false
		files, ferr := memory.CheckFiles(dir)
		if ferr != nil || len(files) == 0 {
			rep.Files = append(rep.Files, err.Error())
		}
		for _, f := range files {
			rep.Files = append(rep.Files, f.Error())
		}
		rep.summarize()
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	defer store.Close()
	rep.Recovered = store.Recoveries()
	j, err := memory.NewJournal(store, memory.JournalOptions{Logger: a.log})
	if err != nil {
		return nil, err
	}
	defer j.Close()
	if err := checkJournals(ctx, j, rep); err != nil {
		return nil, err
	}
	if repair {
		if err := repairJournals(ctx, j, rep); err != nil {
			return nil, err
		}
	}
	if err := checkKnowledge(ctx, store, repair, a, rep); err != nil {
		return nil, err
	}
	for q, err := range j.Quarantined(ctx) {
		if err != nil {
			return nil, err
		}
		rep.Quarantined = append(rep.Quarantined, q)
	}
	rep.summarize()
	return rep, nil
}

// summarize lists what is damaged in the store as it is now. Bytes a
// write-ahead log replay dropped are reported with the files (they were
// kept aside) but are no longer in the store.
func (rep *doctorReport) summarize() {
	rep.Damaged = append(rep.Damaged[:0], rep.Files...)
	for _, r := range rep.Reports {
		for _, f := range r.Findings {
			if f.Damage() {
				rep.Damaged = append(rep.Damaged, fmt.Sprintf("session %s seq %d: %s", r.Session, f.Seq, f.Problem))
			}
		}
	}
	for _, v := range rep.Invariants {
		rep.Damaged = append(rep.Damaged, v.String())
	}
	if k := rep.Knowledge; k != nil {
		if k.Missing > 0 || k.Stale > 0 {
			rep.Damaged = append(rep.Damaged, fmt.Sprintf("knowledge index: %d keys missing or wrong, %d stale (--repair rebuilds it)", k.Missing, k.Stale))
		}
		for _, id := range k.Corrupt {
			rep.Damaged = append(rep.Damaged, fmt.Sprintf("knowledge page %q cannot be decoded", id))
		}
	}
}

// checkJournals verifies every session's journal and the leftovers, and
// holds each sound journal to the recovery invariants. Doctor does not
// know which tools may run twice, so a call started twice is not checked
// here (agcore chaos and chaos.Check with the tools do).
func checkJournals(ctx context.Context, j *memory.BadgerJournal, rep *doctorReport) error {
	rep.Sessions, rep.Reports, rep.Invariants = 0, nil, nil
	var sound []string
	for id, err := range j.Sessions(ctx) {
		if err != nil {
			return err
		}
		rep.Sessions++
		r, err := j.Verify(ctx, id)
		if err != nil {
			return fmt.Errorf("check session %s: %w", id, err)
		}
		if len(r.Findings) > 0 {
			rep.Reports = append(rep.Reports, r)
		}
		if !r.Damaged() {
			sound = append(sound, id)
		}
	}
	if len(sound) > 0 {
		inv, err := chaos.Check(ctx, j, chaos.CheckOptions{Sessions: sound, Rerunnable: func(string) bool { return true }})
		if err != nil {
			return fmt.Errorf("check the recovery invariants: %w", err)
		}
		rep.Invariants = inv.Violations
	}
	for r, err := range j.Leftovers(ctx) {
		if err != nil {
			return err
		}
		rep.Reports = append(rep.Reports, r)
	}
	return nil
}

// repairJournals quarantines the corrupt journals and rewrites the damaged
// snapshots of the sound ones, then checks the journals again.
func repairJournals(ctx context.Context, j *memory.BadgerJournal, rep *doctorReport) error {
	at := time.Now()
	for _, r := range rep.Reports {
		switch {
		case r.Corrupt():
			n, err := j.Quarantine(ctx, r.Session, at)
			if err != nil {
				return err
			}
			rep.Repairs = append(rep.Repairs, fmt.Sprintf("session %s: journal quarantined (%d keys moved aside)", r.Session, n))
		case r.Damaged():
			// Written by a newer version: a newer agcore reads it.
		case hasKind(r, memory.FindingSnapshot):
			if err := j.RepairSnapshots(ctx, r.Session); err != nil {
				return err
			}
			rep.Repairs = append(rep.Repairs, fmt.Sprintf("session %s: snapshot rewritten from the journal", r.Session))
		}
	}
	return checkJournals(ctx, j, rep)
}

func hasKind(r memory.SessionReport, k memory.FindingKind) bool {
	for _, f := range r.Findings {
		if f.Kind == k {
			return true
		}
	}
	return false
}

// checkKnowledge verifies (and with repair, rebuilds) the knowledge index.
func checkKnowledge(ctx context.Context, store *memory.Store, repair bool, a *app, rep *doctorReport) error {
	ix, err := knowledge.VerifyIndex(ctx, store)
	if err != nil {
		return err
	}
	if repair && !ix.Consistent() {
		base, err := knowledge.New(store, knowledge.Options{Logger: a.log})
		if err != nil {
			return err
		}
		rb, err := base.Rebuild(ctx)
		if err != nil {
			return err
		}
		rep.Repairs = append(rep.Repairs, fmt.Sprintf("knowledge index rebuilt from %d pages", rb.Pages))
		if ix, err = knowledge.VerifyIndex(ctx, store); err != nil {
			return err
		}
	}
	rep.Knowledge = &ix
	return nil
}

// printDoctor writes the report as text.
func printDoctor(w io.Writer, t term, rep *doctorReport) {
	ok, bad, note := t.paint(ansiGreen, "ok     "), t.paint(ansiRed, "damaged"), t.paint(ansiCyan, "note   ")
	fmt.Fprintf(w, "agcore doctor: %s (%s)\n", rep.DataDir, modeText(rep.Mode))

	fmt.Fprintln(w, t.paint(ansiBold, "files"))
	if len(rep.Files) == 0 {
		fmt.Fprintf(w, "  %s tables verified against their checksums\n", ok)
	}
	for _, f := range rep.Files {
		fmt.Fprintf(w, "  %s %s\n", bad, f)
	}
	for _, r := range rep.Recovered {
		fmt.Fprintf(w, "  %s %s: %s", note, r.File, r.Problem)
		if r.Action != "" {
			fmt.Fprintf(w, " (%s)", r.Action)
		}
		fmt.Fprintln(w)
	}
	if len(rep.Files) > 0 {
		return // the store could not be opened: nothing else was checked
	}

	fmt.Fprintln(w, t.paint(ansiBold, "sessions"))
	sound := rep.Sessions
	for _, r := range rep.Reports {
		if r.Damaged() {
			sound--
		}
	}
	fmt.Fprintf(w, "  %s %d of %d journals sound\n", ok, sound, rep.Sessions)
	for _, r := range rep.Reports {
		for _, f := range r.Findings {
			status := note
			if f.Damage() {
				status = bad
			}
			if f.Seq > 0 {
				fmt.Fprintf(w, "  %s %s seq %d: %s\n", status, r.Session, f.Seq, f.Problem)
			} else {
				fmt.Fprintf(w, "  %s %s: %s\n", status, r.Session, f.Problem)
			}
		}
		if r.Unsealed > 0 {
			fmt.Fprintf(w, "  %s %s: %d entries written before checksums (version 1)\n", note, r.Session, r.Unsealed)
		}
	}
	for _, v := range rep.Invariants {
		fmt.Fprintf(w, "  %s %s\n", bad, v)
	}
	for _, q := range rep.Quarantined {
		fmt.Fprintf(w, "  %s %s quarantined at %s (%d keys kept aside)\n", note, q.Session, q.At.Format(time.RFC3339), q.Keys)
	}

	fmt.Fprintln(w, t.paint(ansiBold, "knowledge index"))
	if k := rep.Knowledge; k != nil {
		status := ok
		if !k.Consistent() {
			status = bad
		}
		fmt.Fprintf(w, "  %s %d pages, %d derived keys expected, %d missing or wrong, %d stale", status, k.Pages, k.Expected, k.Missing, k.Stale)
		if len(k.Corrupt) > 0 {
			fmt.Fprintf(w, ", %d pages undecodable", len(k.Corrupt))
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintln(w, t.paint(ansiBold, "environment"))
	for _, c := range rep.Environment {
		status := ok
		if c.Status != "ok" {
			status = t.paint(ansiRed, fmt.Sprintf("%-7s", c.Status))
		}
		fmt.Fprintf(w, "  %s %s: %s\n", status, c.Name, c.Detail)
	}

	for _, r := range rep.Repairs {
		fmt.Fprintf(w, "repaired: %s\n", r)
	}
	if len(rep.Damaged) == 0 {
		fmt.Fprintln(w, t.paint(ansiGreen, "no damage found"))
	}
}

func modeText(mode string) string {
	switch mode {
	case "replayed":
		return "not closed cleanly: opened for writing to replay its write-ahead log"
	case "repair":
		return "opened for writing to repair"
	}
	return "opened read-only"
}
