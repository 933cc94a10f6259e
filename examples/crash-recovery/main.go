// Command crash-recovery kills itself in the middle of a turn and resumes.
//
// The program re-executes itself as a child process. The child opens a
// runtime on a data directory and starts a turn whose model calls
// charge_card, a slow tool that is not idempotent: charging a card twice
// would be a real loss. As soon as the child reports that the tool is
// running, the parent SIGKILLs it: no deferred call, no flush, no
// shutdown. The parent then opens the same data directory, and the session
// resumes from its journal: the acknowledged user message is there, the
// tool call that started without a result is not run again (the model
// reads that it was interrupted), and the turn completes. Resubmitting the
// turn with the same turn id follows the resumed turn instead of starting
// a second one. The program prints the journal and the payment ledger to
// show that the card was charged exactly once.
//
// Run it with:
//
//	go run ./examples/crash-recovery
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// The child is told its data directory and ledger file through these
// variables; they are set only in the child's environment.
const (
	envDataDir = "AGCORE_EXAMPLE_CRASH_DATA_DIR"
	envLedger  = "AGCORE_EXAMPLE_CRASH_LEDGER"
)

const (
	sessionID = "checkout-42"
	turnID    = "charge-order-42"
	question  = "Please charge my card for order 42."
	// runningMarker starts the line the child prints when the tool runs.
	runningMarker = "running:"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if isChild() {
		err = child(ctx, os.Stdout)
	} else {
		err = run(ctx, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash-recovery:", err)
		os.Exit(1)
	}
}

// isChild reports whether this process is the child that gets killed.
func isChild() bool { return os.Getenv(envDataDir) != "" }

// ChargeParams are the arguments of charge_card.
type ChargeParams struct {
	Order       string `json:"order" jsonschema:"description=The order to charge"`
	AmountCents int    `json:"amount_cents" jsonschema:"description=The amount in cents,minimum=1"`
}

// ChargeCard appends a charge to the ledger file. It has Write permission
// and does not implement toolsys.IdempotentTool, so the runtime never runs
// an interrupted call of it again.
type ChargeCard struct {
	ledger string
	// running, when set, is called after the charge is written and the
	// call then waits for its context: a slow payment gateway.
	running func()
}

// Name implements toolsys.Typed.
func (ChargeCard) Name() string { return "charge_card" }

// Description implements toolsys.Typed.
func (ChargeCard) Description() string { return "Charges the customer's card for an order." }

// Permission implements toolsys.Typed.
func (ChargeCard) Permission() toolsys.Permission { return toolsys.PermWrite }

// SecretParams implements toolsys.Typed.
func (ChargeCard) SecretParams() []string { return nil }

// Execute implements toolsys.Typed.
func (c ChargeCard) Execute(ctx context.Context, p ChargeParams, _ *toolsys.Context) (toolsys.Result, error) {
	f, err := os.OpenFile(c.ledger, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return toolsys.Result{}, err
	}
	_, err = fmt.Fprintf(f, "charged order %s: %d cents\n", p.Order, p.AmountCents)
	if err = errors.Join(err, f.Close()); err != nil {
		return toolsys.Result{}, err
	}
	if c.running != nil {
		c.running()
		<-ctx.Done()
		return toolsys.Result{}, ctx.Err()
	}
	return toolsys.Result{Content: "charged"}, nil
}

// newRuntime opens a runtime on store with the scripted model and the
// charge_card tool.
func newRuntime(store *memory.Store, tool ChargeCard) (*actors.Runtime, error) {
	model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			Text:      "I will charge the card for order 42.",
			ToolCalls: []scripted.ToolCall{{Name: "charge_card", Arguments: `{"order":"42","amount_cents":1999}`}},
		}},
		{Match: scripted.Match{Tool: "charge_card", Contains: "not run again"}, Reply: scripted.Reply{
			Text: "The charge for order 42 was interrupted, and charging is not safe to repeat, " +
				"so I did not retry it. Please check the payment ledger before charging again.",
		}},
		{Match: scripted.Match{Tool: "charge_card"}, Reply: scripted.Reply{Text: "Order 42 is paid."}},
	}}, scripted.Options{})
	if err != nil {
		return nil, err
	}
	// A registry refuses write tools unless told otherwise; this example
	// lets charge_card run without an approver.
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeAcceptEdits})
	if err != nil {
		return nil, err
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
	if err := toolsys.RegisterTyped[ChargeParams](reg, tool); err != nil {
		return nil, err
	}
	return actors.New(actors.Config{
		Store:      store,
		Durability: memory.DurabilitySync, // every journal append is fsynced before it is acknowledged
		Provider:   model,
		Tools:      reg,
		Limits:     actors.Limits{ToolTimeout: -1},
	})
}

// child starts the turn and reports its progress on out; the parent kills
// it while charge_card runs, so it never returns on its own.
func child(ctx context.Context, out io.Writer) error {
	store, err := memory.Open(memory.Options{Dir: os.Getenv(envDataDir)})
	if err != nil {
		return err
	}
	rt, err := newRuntime(store, ChargeCard{
		ledger: os.Getenv(envLedger),
		running: func() {
			fmt.Fprintln(out, runningMarker, "charge_card has written the charge and waits for the gateway")
		},
	})
	if err != nil {
		return err
	}
	sess, err := rt.Open(ctx, sessionID)
	if err != nil {
		return err
	}
	for ev, err := range sess.Stream(ctx, messages.UserText(question), actors.WithTurnID(turnID)) {
		if err != nil {
			return err
		}
		if e, ok := ev.(messages.TurnStarted); ok {
			fmt.Fprintf(out, "acknowledged: turn %d (%s) is journaled\n", e.Turn, e.TurnID)
		}
	}
	return errors.New("the turn ended before the process was killed")
}

func run(ctx context.Context, out io.Writer) (err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "agcore-crash-recovery-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dataDir, ledger := filepath.Join(dir, "data"), filepath.Join(dir, "ledger.txt")
	fmt.Fprintf(out, "== data directory %s\n", dataDir)

	if err := startAndKill(ctx, out, dataDir, ledger); err != nil {
		return err
	}

	fmt.Fprintln(out, "\n== the parent reopens the data directory")
	store, err := memory.Open(memory.Options{Dir: dataDir})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	rt, err := newRuntime(store, ChargeCard{ledger: ledger})
	if err != nil {
		return err
	}
	sess, err := rt.Open(ctx, sessionID) // replays the journal; the open turn resumes
	if err != nil {
		return errors.Join(err, rt.Shutdown(ctx))
	}
	// The same turn id again: the session recognises the submission and
	// follows the resumed turn instead of running a second one.
	res, err := sess.Submit(ctx, messages.UserText(question), actors.WithTurnID(turnID))
	if err != nil {
		return errors.Join(err, rt.Shutdown(ctx))
	}
	fmt.Fprintf(out, "turn %d (%s) %s after the restart\n", res.Turn, res.TurnID, res.Outcome)
	fmt.Fprintf(out, "assistant: %s\n", res.Text)
	if err := rt.Shutdown(ctx); err != nil {
		return err
	}

	if err := printJournal(ctx, out, store); err != nil {
		return err
	}
	return printLedger(out, ledger)
}

// startAndKill runs the child until it reports that charge_card is
// running, then SIGKILLs it.
func startAndKill(ctx context.Context, out io.Writer, dataDir, ledger string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), envDataDir+"="+dataDir, envLedger+"="+ledger)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	fmt.Fprintf(out, "\n== child %d starts the turn: %q\n", pid, question)
	running := false
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		fmt.Fprintf(out, "[child %d] %s\n", pid, sc.Text())
		if strings.HasPrefix(sc.Text(), runningMarker) {
			running = true
			break
		}
	}
	if running {
		// Process.Kill is SIGKILL: the child gets no chance to clean up.
		if err := cmd.Process.Kill(); err != nil {
			return err
		}
		fmt.Fprintf(out, "[parent] SIGKILL sent to child %d while charge_card was running\n", pid)
	}
	werr := cmd.Wait()
	if !running {
		return fmt.Errorf("the child ended before its tool ran: %v\n%s", werr, stderr.String())
	}
	return nil
}

// printJournal prints the session's journal, entry by entry.
func printJournal(ctx context.Context, out io.Writer, store *memory.Store) (err error) {
	j, err := memory.NewJournal(store, memory.JournalOptions{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, j.Close()) }()
	fmt.Fprintf(out, "\n== the journal of %s\n", sessionID)
	for e, err := range j.Read(ctx, sessionID, 1) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%3d  %-18s %s\n", e.Envelope.Seq, e.Envelope.Type, describe(e.Event))
	}
	return nil
}

// describe summarises one journal event in a line.
func describe(ev messages.JournalEvent) string {
	switch e := ev.(type) {
	case messages.Activated:
		if e.Activation > 1 {
			return fmt.Sprintf("activation %d: the session was opened again after the crash", e.Activation)
		}
		return fmt.Sprintf("activation %d", e.Activation)
	case messages.UserMessage:
		return fmt.Sprintf("turn %d (%s): %q", e.Turn, e.TurnID, e.Message.Text())
	case messages.AssistantMessage:
		s := fmt.Sprintf("%q", e.Message.Text())
		for _, c := range e.Message.ToolCalls {
			s += fmt.Sprintf(" + call %s %s", c.Name, c.Arguments)
		}
		return s
	case messages.ToolCallStarted:
		return fmt.Sprintf("%s %s", e.Name, e.CallID)
	case messages.ToolResult:
		mark := ""
		if e.IsError {
			mark = " (error)"
		}
		return fmt.Sprintf("%s %s%s: %q", e.Name, e.CallID, mark, e.Content)
	case messages.TurnCompleted:
		return fmt.Sprintf("turn %d %s after %d model calls", e.Turn, e.Outcome, e.RoundTrips)
	}
	return ""
}

// printLedger shows how many times the card was charged.
func printLedger(out io.Writer, ledger string) error {
	data, err := os.ReadFile(ledger)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	fmt.Fprintf(out, "\n== the payment ledger\n")
	for _, l := range lines {
		fmt.Fprintf(out, "  %s\n", l)
	}
	fmt.Fprintf(out, "charge_card ran %d time(s): the interrupted call was not run again\n", len(lines))
	if len(lines) != 1 {
		return fmt.Errorf("the card was charged %d times", len(lines))
	}
	return nil
}
