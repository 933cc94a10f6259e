package benchsuite

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of Run: the machine, and the result of every
// workload that ran (the others are nil).
type Report struct {
	// Machine is where the report was measured.
	Machine Machine `json:"machine"`
	// Quick reports that the workloads ran in their quick sizes.
	Quick bool `json:"quick"`
	// ElapsedSeconds is the wall time of the whole run.
	ElapsedSeconds float64 `json:"elapsed_s"`

	// TurnOverhead is the turn-overhead result, nil when it did not run.
	TurnOverhead *TurnOverheadResult `json:"turn_overhead,omitempty"`
	// FanOut is the fan-out result, nil when it did not run.
	FanOut *FanOutResult `json:"fan_out,omitempty"`
	// Sessions is the sessions result, nil when it did not run.
	Sessions *SessionsResult `json:"sessions,omitempty"`
	// Journal is the journal result, nil when it did not run.
	Journal *JournalResult `json:"journal,omitempty"`
	// Retrieval is the retrieval result, nil when it did not run.
	Retrieval *RetrievalResult `json:"retrieval,omitempty"`
	// Recovery is the recovery result, nil when it did not run.
	Recovery *RecoveryResult `json:"recovery,omitempty"`
	// IdleSessions is the idle-sessions result, nil when it did not run.
	IdleSessions *IdleResult `json:"idle_sessions,omitempty"`
}

// Table is a result laid out for reading.
type Table struct {
	// Title names the workload.
	Title string
	// Columns are the column headings.
	Columns []string
	// Rows hold one formatted cell per column.
	Rows [][]string
	// Notes are sentences printed under the table.
	Notes []string
}

// Tables returns the table of each workload that ran, in the order of
// Workloads.
func (r *Report) Tables() []Table {
	var ts []Table
	if r.TurnOverhead != nil {
		ts = append(ts, r.TurnOverhead.Table())
	}
	if r.FanOut != nil {
		ts = append(ts, r.FanOut.Table())
	}
	if r.Sessions != nil {
		ts = append(ts, r.Sessions.Table())
	}
	if r.Journal != nil {
		ts = append(ts, r.Journal.Table())
	}
	if r.Retrieval != nil {
		ts = append(ts, r.Retrieval.Table())
	}
	if r.Recovery != nil {
		ts = append(ts, r.Recovery.Table())
	}
	if r.IdleSessions != nil {
		ts = append(ts, r.IdleSessions.Table())
	}
	return ts
}

// WriteText writes the machine line and every table, aligned, to w.
func (r *Report) WriteText(w io.Writer) error {
	mode := "full"
	if r.Quick {
		mode = "quick"
	}
	if _, err := fmt.Fprintf(w, "machine: %s\nrun: %s, %s\n", r.Machine, mode,
		(time.Duration(r.ElapsedSeconds * float64(time.Second))).Round(100*time.Millisecond)); err != nil {
		return err
	}
	for _, t := range r.Tables() {
		if err := t.write(w); err != nil {
			return err
		}
	}
	return nil
}

func (t Table) write(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "\n%s\n", t.Title); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(t.Columns, "\t")+"\t")
	for _, row := range t.Rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range t.Notes {
		if _, err := fmt.Fprintf(w, "  %s\n", n); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes r as indented JSON to w.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Cell formatting.

func fmtFloat(x float64, prec int) string { return fmt.Sprintf("%.*f", prec, x) }

func fmtRatio(x float64) string { return fmt.Sprintf("%.2fx", x) }

func fmtInt(n int) string {
	s := fmt.Sprint(n)
	if n < 10000 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtRate(x float64) string { return fmtInt(int(x + 0.5)) }

func fmtMiB(bytes float64) string { return fmt.Sprintf("%.1f MiB", bytes/(1<<20)) }

func fmtKiB(bytes float64) string { return fmt.Sprintf("%.1f KiB", bytes/(1<<10)) }
