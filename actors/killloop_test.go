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
	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// The kill loop re-executes the test binary as a child that runs several
// sessions on a data directory, each submitting turn after turn; every turn
// calls a read-only tool and a slow, non-idempotent one. The parent SIGKILLs
// the child at a seeded random point, checks the journal and the tools'
// side effects, and starts the next child on the same directory. The kill
// points cover the whole life of a process: while its sessions run turns
// (after a number of event lines), while it opens the data directory (a
// delay after it starts opening), and while it opens and closes it again
// and again (a delay into a child that cycles through open, one turn per
// session, shutdown).
const (
	loopEnvMode     = "AGCORE_KILLLOOP_MODE" // "run", "cycle" or "settle"
	loopEnvDir      = "AGCORE_KILLLOOP_DIR"
	loopEnvCharges  = "AGCORE_KILLLOOP_CHARGES"
	loopSessions    = 4
	loopMaxTurns    = 1000 // per session and child; the parent kills long before
	loopMaxKillLine = 60   // a kill comes after at most this many event lines
	// loopStartWindow is the start-up window: a start-up kill lands this
	// long, at most, after the child starts opening the data directory,
	// which covers Badger's open (a few milliseconds on a small store) and
	// the first turns.
	loopStartWindow = 50 * time.Millisecond
	// loopCycleWindow is how long, at most, a cycling child runs before
	// its kill: several opens and shutdowns.
	loopCycleWindow = 300 * time.Millisecond
	// loopAuditEvery is how often, in kills, the journal is audited.
	loopAuditEvery = 10
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
// It prints "opening" before it opens the runtime on the data directory. In
// "run" mode every session submits turns until the parent kills the
// process, printing "ack <session> <turn id> <k>" on TurnStarted (the user
// message is journaled by then), and "tool", "done" and "end" lines for the
// other events. In "cycle" mode it opens the runtime, runs one such turn per
// session and shuts the runtime down, again and again, printing "closed"
// after each shutdown. In "settle" mode every session resumes, runs one
// last turn, and the runtime shuts down.
func TestKillLoopChild(t *testing.T) {
	mode := os.Getenv(loopEnvMode)
	if mode == "" {
		t.Skip("runs only as the child of TestKillLoop")
	}
	script := toolScript("done",
		scripted.ToolCall{Name: "lookup", Arguments: `{}`},
		scripted.ToolCall{Name: "charge", Arguments: `{}`})
	script.Stateless = true
	ctx := context.Background()
	for {
		fmt.Println("opening")
		rt, err := actors.New(actors.Config{
			DataDir: os.Getenv(loopEnvDir), Durability: memory.DurabilitySync,
			Provider: scripted.MustNew(script, scripted.Options{}), Tools: loopTools(t, os.Getenv(loopEnvCharges)),
			IdleTimeout: -1, Compaction: actors.Compaction{Disabled: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		turns := loopMaxTurns
		if mode == "cycle" {
			turns = 1
		}
		var wg sync.WaitGroup
		for i := range loopSessions {
			wg.Go(func() { loopSession(ctx, t, rt, loopSessionID(i), mode, turns) })
		}
		wg.Wait()
		if err := rt.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if mode != "cycle" || t.Failed() {
			break
		}
		fmt.Println("closed")
	}
	fmt.Println("settled")
}

// loopSession runs turns of session id (one settling turn in "settle"
// mode), printing the lines TestKillLoopChild describes.
func loopSession(ctx context.Context, t *testing.T, rt *actors.Runtime, id, mode string, turns int) {
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
	for k := st.NextTurn; k < st.NextTurn+turns; k++ {
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
}

// loopChild is one run of the child process.
type loopChild struct {
	lines  []string
	killed bool
	err    error
	stderr string
}

// loopKill says when the parent kills a child: once it has read
// afterLines event lines, or afterOpen after the child's first "opening"
// line. Neither set: the child runs to its end.
type loopKill struct {
	afterLines int
	afterOpen  time.Duration
}

// runLoopChild starts the child in mode, reads its output and kills it as
// kill says. It returns every line the child wrote, those written between
// the last one read and the kill included.
func runLoopChild(ctx context.Context, t *testing.T, mode, dataDir, charges string, kill loopKill) loopChild {
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
	var (
		run     loopChild
		mu      sync.Mutex
		killErr error
		timer   *time.Timer
	)
	doKill := func() {
		mu.Lock()
		defer mu.Unlock()
		if !run.killed {
			killErr = cmd.Process.Kill()
			run.killed = true
		}
	}
	events := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		run.lines = append(run.lines, line)
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "opening" && kill.afterOpen > 0 && timer == nil:
			timer = time.AfterFunc(kill.afterOpen, doKill)
		case f[0] == "ack" || f[0] == "tool" || f[0] == "done" || f[0] == "end":
			events++
			if kill.afterLines > 0 && events >= kill.afterLines {
				doKill()
			}
		}
	}
	run.err = cmd.Wait()
	if timer != nil {
		timer.Stop()
	}
	mu.Lock()
	defer mu.Unlock()
	if killErr != nil {
		t.Fatal(killErr)
	}
	run.stderr = stderr.String()
	return run
}

// loopAck is an acknowledged user message.
type loopAck struct {
	session, turnID, text string
}

// TestKillLoop SIGKILLs a process running concurrent sessions at random
// points, again and again, and checks after every restart that the data
// directory opens at once, that each acknowledged user message is in the
// journal, that no non-idempotent tool ran twice for the same call (by its
// side effects and by the journal), and that every journal replays. Most
// kills land in the start-up window (while the runtime opens the data
// directory and starts its first turns) or while the runtime opens and
// closes it, where a kill used to leave files that failed the next start;
// the others land mid-turn. A last run lets every session settle and checks
// that each tool call then has exactly one result.
func TestKillLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	// Kills of each kind: mid-turn, start-up, open/close cycles.
	turnKills, startKills, cycleKills := 5, 100, 100
	if longForm() {
		turnKills, startKills, cycleKills = 20, 400, 400
	}
	const seed = 7
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	dataDir, charges := filepath.Join(dir, "data"), filepath.Join(dir, "charges.log")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

	var acks []loopAck
	ackChecks, callChecks, failedRestarts, chargesTwice, lost := 0, 0, 0, 0, 0
	// What the last check saw of the recovery: tool calls started more
	// than once (re-run read-only calls) and calls answered as interrupted.
	reruns, interrupted := 0, 0
	check := func(round string, settled bool) {
		t.Helper()
		j, closeJournal := openJournal(t, dataDir)
		defer closeJournal()
		var checkAcks []chaos.Ack
		for _, ack := range acks {
			checkAcks = append(checkAcks, chaos.Ack{Session: ack.session, TurnID: ack.turnID, Text: ack.text})
		}
		rep, err := chaos.Check(ctx, j, chaos.CheckOptions{Acknowledged: checkAcks,
			Rerunnable: func(name string) bool { return name == "lookup" }, Settled: settled})
		if err != nil {
			t.Fatalf("%s: %v", round, err)
		}
		for _, v := range rep.Violations {
			if v.Invariant == chaos.InvAckPresent {
				lost++
			}
			t.Errorf("%s: %s", round, v)
		}
		ackChecks += rep.Acknowledged
		callChecks += rep.ToolCalls
		reruns, interrupted = rep.Reruns, rep.Interrupted
		audits := map[string]*journalAudit{}
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
				chargesTwice++
				t.Errorf("%s: charge ran twice for %s call %s", round, f[0], key)
			}
			if a := audits[f[0]]; a == nil || a.started[key] != 1 {
				t.Errorf("%s: charge ran for %s call %s without one ToolCallStarted before it", round, f[0], key)
			}
		}
	}

	type round struct {
		mode string
		kill loopKill
	}
	var rounds []round
	for range turnKills {
		rounds = append(rounds, round{"run", loopKill{afterLines: rng.IntN(loopMaxKillLine) + 1}})
	}
	for range startKills {
		rounds = append(rounds, round{"run", loopKill{afterOpen: time.Duration(rng.Int64N(int64(loopStartWindow))) + 1}})
	}
	for range cycleKills {
		rounds = append(rounds, round{"cycle", loopKill{afterOpen: time.Duration(rng.Int64N(int64(loopCycleWindow))) + 1}})
	}
	rng.Shuffle(len(rounds), func(i, j int) { rounds[i], rounds[j] = rounds[j], rounds[i] })

	opens, closes := 0, 0
	for i, r := range rounds {
		run := runLoopChild(ctx, t, r.mode, dataDir, charges, r.kill)
		if !run.killed {
			failedRestarts++
			t.Fatalf("kill %d (%s, %+v): the child exited before the kill, its start failed: %v\n%s\n%s",
				i+1, r.mode, r.kill, run.err, strings.Join(run.lines, "\n"), run.stderr)
		}
		newAcks := 0
		for _, line := range run.lines {
			f := strings.Fields(line)
			switch {
			case len(f) == 1 && f[0] == "opening":
				opens++
			case len(f) == 1 && f[0] == "closed":
				closes++
			case len(f) == 4 && f[0] == "ack":
				k, err := strconv.Atoi(f[3])
				if err != nil {
					t.Fatalf("bad ack line %q", line)
				}
				acks = append(acks, loopAck{session: f[1], turnID: f[2], text: loopText(f[1], k)})
				newAcks++
			}
		}
		// The next child's start is the restart under test: a start that
		// fails ends that child before its kill. The journal and the side
		// effects are audited after each mid-turn kill and every
		// loopAuditEvery kills; what an audit finds (an acknowledged turn
		// lost, a charge made twice) stays found at the next.
		if r.kill.afterLines > 0 {
			t.Logf("kill %d after %d event lines: %d lines read, %d new acknowledgements", i+1, r.kill.afterLines, len(run.lines), newAcks)
		}
		if r.kill.afterLines > 0 || (i+1)%loopAuditEvery == 0 {
			check(fmt.Sprintf("after kill %d (%s, %+v)", i+1, r.mode, r.kill), false)
		}
	}

	run := runLoopChild(ctx, t, "settle", dataDir, charges, loopKill{})
	if run.err != nil || len(run.lines) == 0 || !strings.Contains(strings.Join(run.lines, "\n"), "settled") {
		t.Fatalf("the settling run failed: %v\n%s\n%s", run.err, strings.Join(run.lines, "\n"), run.stderr)
	}
	check("after settling", true)
	t.Logf("%d kills (%d mid-turn, %d in the start-up window, %d in open/close cycles): %d runtime opens, %d shutdowns completed",
		len(rounds), turnKills, startKills, cycleKills, opens, closes)
	t.Logf("after each restart: %d failed restarts, %d acknowledged turns lost, %d non-idempotent tool calls run twice (%d acknowledgement checks, %d tool-call checks)",
		failedRestarts, lost, chargesTwice, ackChecks, callChecks)
	t.Logf("recovery: %d read-only calls re-run, %d non-idempotent calls answered as interrupted", reruns, interrupted)
}
