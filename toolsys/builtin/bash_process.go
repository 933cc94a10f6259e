package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/sandbox"
)

// defaultBlockTimeout is how long bash_process blocks when the call names no
// timeout.
const defaultBlockTimeout = 30 * time.Second

// BashProcessParams are bash_process's arguments: list, or a process_id with
// at most one of block and stop.
type BashProcessParams struct {
	ProcessID      string `json:"process_id,omitempty" jsonschema:"description=Id of a background process started by bash (like bg_1)"`
	Block          bool   `json:"block,omitempty" jsonschema:"description=Wait until the process exits (at most timeout_seconds) before returning"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"description=How long block waits. Default 30.,minimum=1,maximum=3600"`
	Stop           bool   `json:"stop,omitempty" jsonschema:"description=Kill the process and everything it started"`
	List           bool   `json:"list,omitempty" jsonschema:"description=List all background processes with their status"`
}

// BashProcess is the bash_process tool: it returns a background process's
// output written since the last call and its status, optionally after
// waiting for it to exit, stops it, or lists all background processes.
// Where bash is refused (the sandbox cannot confine commands in Refuse
// mode), so is bash_process, with the same reason.
type BashProcess struct {
	procs   *ProcessManager
	sandbox *sandbox.Sandbox
}

// NewBashProcess returns bash_process over procs, the manager bash starts
// background commands in, and opts.Sandbox, the sandbox bash uses.
func NewBashProcess(opts Options, procs *ProcessManager) *BashProcess {
	return &BashProcess{procs: procs, sandbox: opts.sandbox()}
}

// Name returns "bash_process".
func (*BashProcess) Name() string { return "bash_process" }

// Description tells the model how to use bash_process.
func (*BashProcess) Description() string {
	return "Manage background commands started by bash with run_in_background. With process_id: return " +
		"the output written since the last check and the status; block waits for the process to exit; " +
		"stop kills it. With list: show all background processes."
}

// Permission is PermExecute: it can kill processes.
func (*BashProcess) Permission() toolsys.Permission { return toolsys.PermExecute }

// SecretParams is nil.
func (*BashProcess) SecretParams() []string { return nil }

// Idempotent is false: a poll consumes the output it returns.
func (*BashProcess) Idempotent() bool { return false }

// RuleSubject is the process id ("" for list).
func (*BashProcess) RuleSubject(p BashProcessParams, _ *toolsys.Context) string { return p.ProcessID }

// Precheck accepts list alone, or a process_id with at most one of block and
// stop.
func (*BashProcess) Precheck(p BashProcessParams) error {
	switch {
	case p.List && (p.ProcessID != "" || p.Block || p.Stop || p.TimeoutSeconds != 0):
		return errors.New("list takes no other arguments")
	case !p.List && p.ProcessID == "":
		return errors.New("give process_id, or set list to see the background processes")
	case p.Block && p.Stop:
		return errors.New("give block or stop, not both")
	case p.TimeoutSeconds != 0 && !p.Block:
		return errors.New("timeout_seconds applies to block only")
	}
	return nil
}

// Execute polls, waits for, stops or lists.
func (t *BashProcess) Execute(ctx context.Context, p BashProcessParams, tc *toolsys.Context) (toolsys.Result, error) {
	if err := t.Precheck(p); err != nil {
		return toolsys.ErrorResult("%v", err), nil
	}
	if t.procs == nil {
		return toolsys.ErrorResult("background commands are not available"), nil
	}
	if _, err := t.sandbox.Check(ctx); errors.Is(err, sandbox.ErrUnconfined) {
		return toolsys.ErrorResult("%v", err), nil
	} else if err != nil {
		return toolsys.Result{}, fmt.Errorf("bash_process: %w", err)
	}
	if p.List {
		return t.list(), nil
	}
	proc, err := t.procs.Get(p.ProcessID)
	if err != nil {
		return toolsys.ErrorResult("no background process %q; %s", p.ProcessID, t.known()), nil
	}
	timedOut := false
	switch {
	case p.Stop:
		proc.Stop()
		if err := proc.Wait(ctx); err != nil {
			return toolsys.Result{}, fmt.Errorf("bash_process: %w", err)
		}
	case p.Block:
		wait := defaultBlockTimeout
		if p.TimeoutSeconds > 0 {
			wait = min(time.Duration(p.TimeoutSeconds)*time.Second, maxCommandTimeout)
		}
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-proc.Done():
		case <-timer.C:
			timedOut = true
		case <-ctx.Done():
			return toolsys.Result{}, fmt.Errorf("bash_process: %w", context.Cause(ctx))
		}
	}
	info := proc.Info()
	out, dropped := proc.ReadNew()
	meta := map[string]any{"process_id": info.ID, "status": string(info.Status), "new_bytes": len(out)}
	if p.Block {
		meta["timed_out"] = timedOut
	}
	var b strings.Builder
	switch info.Status {
	case StatusRunning:
		fmt.Fprintf(&b, "%s is running (pid %d, for %s).", info.ID, info.PID, info.Duration.Round(time.Second))
		if timedOut {
			b.WriteString(" It did not exit within the block timeout.")
		}
	case StatusStopped:
		fmt.Fprintf(&b, "%s was stopped after %s.", info.ID, info.Duration.Round(time.Millisecond))
	case StatusExited:
		meta["exit_code"] = info.ExitCode
		fmt.Fprintf(&b, "%s exited with code %d after %s.", info.ID, info.ExitCode, info.Duration.Round(time.Millisecond))
	}
	b.WriteByte('\n')
	if dropped > 0 {
		fmt.Fprintf(&b, "[%d bytes of output were dropped before this poll]\n", dropped)
	}
	if out == "" {
		b.WriteString("(no new output)")
	} else {
		b.WriteString(out)
	}
	return toolsys.Result{
		Content:  b.String(),
		IsError:  info.Status == StatusExited && info.ExitCode != 0,
		Metadata: meta,
	}, nil
}

// list describes every background process, one per line.
func (t *BashProcess) list() toolsys.Result {
	infos := t.procs.List()
	if len(infos) == 0 {
		return toolsys.Result{Content: "No background processes.", Metadata: map[string]any{"processes": 0}}
	}
	var b strings.Builder
	for _, in := range infos {
		status := string(in.Status)
		if in.Status == StatusExited {
			status = fmt.Sprintf("exited(%d)", in.ExitCode)
		}
		fmt.Fprintf(&b, "%s\t%s\tpid %d\t%s\t%s", in.ID, status, in.PID, in.Duration.Round(time.Second), oneLine(in.Command, 120))
		if in.Description != "" {
			fmt.Fprintf(&b, "\t(%s)", oneLine(in.Description, 80))
		}
		b.WriteByte('\n')
	}
	return toolsys.Result{Content: b.String(), Metadata: map[string]any{"processes": len(infos)}}
}

// known names the known process ids, for an unknown-id message.
func (t *BashProcess) known() string {
	infos := t.procs.List()
	if len(infos) == 0 {
		return "there are no background processes"
	}
	ids := make([]string, len(infos))
	for i, in := range infos {
		ids[i] = in.ID
	}
	return "known: " + strings.Join(ids, ", ")
}

// oneLine flattens s to one line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return string(cutUTF8([]byte(s), n)) + "..."
	}
	return s
}
