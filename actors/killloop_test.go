package actors_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// The kill loop re-executes the test binary as a child that runs several
// sessions on a data directory, each submitting turn after turn; every turn
// calls a read-only tool and a slow, non-idempotent one. The parent SIGKILLs
// the child at a seeded random point of its output, checks the journal and
// the tools' side effects, and starts the next child on the same directory.
const (
	loopEnvMode     = "AGCORE_KILLLOOP_MODE" // "run" or "settle"
	loopEnvDir      = "AGCORE_KILLLOOP_DIR"
	loopEnvCharges  = "AGCORE_KILLLOOP_CHARGES"
	loopSessions    = 4
	loopMaxTurns    = 1000 // per session and child; the parent kills long before
	loopMaxKillLine = 60   // a kill comes after at most this many event lines
)

func loopSessionID(i int) string { return fmt.Sprintf("kl-%d", i) }

func loopTurnID(session string, k int) string { return fmt.Sprintf("%s-t%d", session, k) }

func loopText(session string, k int) string { return fmt.Sprintf("msg %s %d", session, k) }

// chargeTool is the kill loop's slow, non-idempotent tool: it appends
// "<session> <turn> <call id>" to a file and fsyncs it before it answers, a
// side effect that must never happen twice for one call.
type chargeTool struct{ path string }

func (chargeTool) Name() string        { return "charge" }
func (chargeTool) Description() string { return "charges the card" }
func (chargeTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (chargeTool) Permission() toolsys.Permission { return toolsys.PermWrite }
func (chargeTool) SecretParams() []string         { return nil }
func (chargeTool) Idempotent() bool               { return false }

func (c chargeTool) Execute(_ context.Context, _ json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	f, err := os.OpenFile(c.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return toolsys.Result{}, err
	}
	_, err = fmt.Fprintf(f, "%s %d %s\n", tc.SessionID, tc.Turn, tc.CallID)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return toolsys.Result{}, err
	}
	return toolsys.Result{Content: "charged"}, nil
}

// loopTools returns the kill loop's tools: lookup (read-only) and charge.
func loopTools(t *testing.T, charges string) *toolsys.Registry {
	reg := runAllRegistry(t)
	reg.MustRegister(echoTool("lookup"))
	reg.MustRegister(chargeTool{path: charges})
	return reg
}

// TestKillLoopChild is the child's body; it does nothing in a normal run.
// In "run" mode every session submits turns until the parent kills the
// process, printing "ack <session> <turn id> <k>" on TurnStarted (the user
// message is journaled by then), and "tool", "done" and "end" lines for the
// other events. In "settle" mode every session resumes, runs one last turn,
// and the runtime shuts down.
func TestKillLoopChild(t *testing.T) {
	mode := os.Getenv(loopEnvMode)
	if mode == "" {
		t.Skip("runs only as the child of TestKillLoop")
	}
	script := toolScript("done",
		scripted.ToolCall{Name: "lookup", Arguments: `{}`},
		scripted.ToolCall{Name: "charge", Arguments: `{}`})
	script.Stateless = true
	rt, err := actors.New(actors.Config{
		DataDir: os.Getenv(loopEnvDir), Durability: memory.DurabilitySync,
		Provider: scripted.MustNew(script, scripted.Options{}), Tools: loopTools(t, os.Getenv(loopEnvCharges)),
		IdleTimeout: -1, Compaction: actors.Compaction{Disabled: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range loopSessions {
		id := loopSessionID(i)
		wg.Go(func() {
			sess, err := rt.Open(ctx, id)
			if err != nil {
				t.Errorf("open %s: %v", id, err)
				return
			}
			st, err := sess.Status(ctx)
			if err != nil {
				t.Errorf("status %s: %v", id, err)
				return
			}
			if mode == "settle" {
				res, err := sess.Submit(ctx, messages.UserText("settle "+id), actors.WithTurnID(id+"-settle"))
				if err != nil || res.Outcome != messages.OutcomeCompleted {
					t.Errorf("settle %s: %+v, %v", id, res, err)
				}
				return
			}
			for k := st.NextTurn; k < st.NextTurn+loopMaxTurns; k++ {
				turnID := loopTurnID(id, k)
				for ev, err := range sess.Stream(ctx, messages.UserText(loopText(id, k)), actors.WithTurnID(turnID)) {
					if err != nil {
						t.Errorf("turn %s: %v", turnID, err)
						return
					}
					switch e := ev.(type) {
					case messages.TurnStarted:
						fmt.Printf("ack %s %s %d\n", id, turnID, k)
					case messages.ToolStarted:
						fmt.Printf("tool %s %s %s\n", id, e.CallID, e.Name)
					case messages.ToolFinished:
						fmt.Printf("done %s %s %s\n", id, e.CallID, e.Name)
					case messages.TurnEnded:
						fmt.Printf("end %s %s %s\n", id, turnID, e.Outcome)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Println("settled")
}

// loopChild is one run of the child process.
type loopChild struct {
	lines  []string
	killed bool
	err    error
	stderr string
}

// runLoopChild starts the child in mode and reads its output; with
// killAfter >= 0 it SIGKILLs the child once it has read that many event
// lines (0: at once, while the runtime opens). It returns every line the
// child wrote, those written between the last one read and the kill
// included.
func runLoopChild(ctx context.Context, t *testing.T, mode, dataDir, charges string, killAfter int) loopChild {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKillLoopChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), loopEnvMode+"="+mode, loopEnvDir+"="+dataDir, loopEnvCharges+"="+charges)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var run loopChild
	kill := func() {
		if !run.killed {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			run.killed = true
		}
	}
	if killAfter == 0 {
		kill()
	}
	events := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		run.lines = append(run.lines, line)
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "ack" || f[0] == "tool" || f[0] == "done" || f[0] == "end") {
			events++
		}
		if killAfter > 0 && events >= killAfter {
			kill()
		}
	}
	run.err = cmd.Wait()
	run.stderr = stderr.String()
	return run
}

// loopAck is an acknowledged user message.
type loopAck struct {
	session, turnID, text string
}

// TestKillLoop SIGKILLs a process running concurrent sessions at random
// points, again and again, and checks after every restart that each
// acknowledged user message is in the journal, that no non-idempotent tool
// ran twice for the same call (by its side effects and by the journal), and
// that every journal replays. A last run lets every session settle and
// checks that each tool call then has exactly one result.
func TestKillLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	kills := 5
	if longForm() {
		kills = 20
	}
	const seed = 7
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	dataDir, charges := filepath.Join(dir, "data"), filepath.Join(dir, "charges.log")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

	var acks []loopAck
	ackChecks, callChecks := 0, 0
	// What the last check saw of the recovery: tool calls started more
	// than once (re-run read-only calls) and calls answered as interrupted.
	reruns, interrupted := 0, 0
	check := func(round string, settled bool) {
		t.Helper()
		j, closeJournal := openJournal(t, dataDir)
		defer closeJournal()
		audits := map[string]*journalAudit{}
		reruns, interrupted = 0, 0
		for i := range loopSessions {
			id := loopSessionID(i)
			a, err := auditJournal(ctx, j, id)
			if errors.Is(err, memory.ErrNotFound) && !settled {
				continue // killed before the session's first append
			}
			if err != nil {
				t.Fatalf("%s: the journal of %s is unreadable: %v", round, id, err)
			}
			audits[id] = a
			for _, problem := range a.check(func(name string) bool { return name == "lookup" }, settled) {
				t.Errorf("%s: %s: %s", round, id, problem)
			}
			callChecks += len(a.calls)
			interrupted += a.interrupted
			for _, n := range a.started {
				if n > 1 {
					reruns++
				}
			}
		}
		for _, ack := range acks {
			a := audits[ack.session]
			if a == nil || a.turnIDs[ack.turnID] != 1 || !a.hasUserText(ack.text) {
				t.Errorf("%s: acknowledged message %q (turn id %s) is not journaled once", round, ack.text, ack.turnID)
			}
			ackChecks++
		}
		data, err := os.ReadFile(charges)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		ran := map[string]int{}
		for line := range strings.Lines(string(data)) {
			f := strings.Fields(line)
			if len(f) != 3 {
				t.Fatalf("%s: bad charges line %q", round, line)
			}
			turn, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("%s: bad charges line %q", round, line)
			}
			key := callKey(turn, f[2])
			if ran[f[0]+" "+key]++; ran[f[0]+" "+key] > 1 {
				t.Errorf("%s: charge ran twice for %s call %s", round, f[0], key)
			}
			if a := audits[f[0]]; a == nil || a.started[key] != 1 {
				t.Errorf("%s: charge ran for %s call %s without one ToolCallStarted before it", round, f[0], key)
			}
		}
	}

	for round := range kills {
		killAfter := rng.IntN(loopMaxKillLine + 1)
		run := runLoopChild(ctx, t, "run", dataDir, charges, killAfter)
		if !run.killed {
			t.Fatalf("kill %d: the child exited before the kill: %v\n%s\n%s", round+1, run.err, strings.Join(run.lines, "\n"), run.stderr)
		}
		newAcks := 0
		for _, line := range run.lines {
			if f := strings.Fields(line); len(f) == 4 && f[0] == "ack" {
				k, err := strconv.Atoi(f[3])
				if err != nil {
					t.Fatalf("bad ack line %q", line)
				}
				acks = append(acks, loopAck{session: f[1], turnID: f[2], text: loopText(f[1], k)})
				newAcks++
			}
		}
		t.Logf("kill %d after %d event lines: %d lines read, %d new acknowledgements", round+1, killAfter, len(run.lines), newAcks)
		check(fmt.Sprintf("after kill %d", round+1), false)
	}

	run := runLoopChild(ctx, t, "settle", dataDir, charges, -1)
	if run.err != nil || len(run.lines) == 0 || !strings.Contains(strings.Join(run.lines, "\n"), "settled") {
		t.Fatalf("the settling run failed: %v\n%s\n%s", run.err, strings.Join(run.lines, "\n"), run.stderr)
	}
	check("after settling", true)
	t.Logf("%d kills; invariants checked after each restart: %d acknowledgement checks, %d tool-call checks", kills, ackChecks, callChecks)
	t.Logf("recovery: %d read-only calls re-run, %d non-idempotent calls answered as interrupted", reruns, interrupted)
}
