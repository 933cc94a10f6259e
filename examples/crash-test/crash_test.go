package crashtest

// This is the crash test to copy next to your own agent. It needs three
// things from the agent: its tools (Tools), its model (Model) and a way to
// open its runtime on a data directory (Open).

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/messages"
)

const (
	sessions = 8
	turns    = 4
	// workerEnv, in the environment of a re-executed test binary, makes it
	// run the agent on the data directory it names until it is killed.
	workerEnv = "CRASHTEST_WORKER_DIR"
)

// TestMain runs the agent instead of the tests in a worker process.
func TestMain(m *testing.M) {
	if dir := os.Getenv(workerEnv); dir != "" {
		if err := runAgent(context.Background(), dir, uint64(time.Now().UnixNano()), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runAgent runs every session's remaining turns on the agent, under
// faults: a fifth of the model calls fail, a tenth of the tool calls panic
// and one in twenty hangs. It writes "ack <session> <turn id> <text>" to
// out once a user message is journaled (its turn started), then shuts the
// runtime down.
func runAgent(ctx context.Context, dir string, seed uint64, out *os.File) error {
	model, err := Model()
	if err != nil {
		return err
	}
	faultyModel, err := chaos.NewProvider(model, chaos.ProviderOptions{FailRate: 0.2, Seed: seed})
	if err != nil {
		return err
	}
	tools, err := Tools(filepath.Join(filepath.Dir(dir), "ledger"))
	if err != nil {
		return err
	}
	faultyTools, err := chaos.NewToolSet(tools, chaos.ToolOptions{PanicRate: 0.1, HangRate: 0.05, Seed: seed})
	if err != nil {
		return err
	}
	rt, err := Open(dir, faultyModel, faultyTools)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("customer-%d", i)
			sess, err := rt.Open(ctx, id)
			if err != nil {
				return
			}
			st, err := sess.Status(ctx)
			if err != nil {
				return
			}
			for k := st.NextTurn; k < turns; k++ {
				turnID, text := fmt.Sprintf("%s-t%d", id, k), fmt.Sprintf("My order 42 arrived damaged (%s, %d).", id, k)
				for ev, err := range sess.Stream(ctx, messages.UserText(text), actors.WithTurnID(turnID)) {
					if _, ok := ev.(messages.TurnStarted); ok && err == nil {
						mu.Lock()
						fmt.Fprintf(out, "ack %s %s %s\n", id, turnID, text)
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return rt.Shutdown(sctx)
}

// check runs the invariant checker on dir with the acknowledged messages,
// and fails the test for each violation.
func check(t *testing.T, dir string, acks []chaos.Ack) {
	t.Helper()
	tools, err := Tools(filepath.Join(filepath.Dir(dir), "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := chaos.CheckDir(t.Context(), dir, chaos.CheckOptions{
		Acknowledged: acks,
		// The tools' own declarations say which calls may run twice.
		Rerunnable: chaos.RerunnableIn(tools),
		Settled:    true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rep.Violations {
		t.Error(v)
	}
	if rep.Sessions != sessions || rep.Turns["completed"]+rep.Turns["failed"] != sessions*turns {
		t.Errorf("%d journals, turns %v: want %d journals and %d ended turns", rep.Sessions, rep.Turns, sessions, sessions*turns)
	}
	t.Logf("%d journals, turns %v, %d tool calls (%d run again, %d answered as interrupted), %d acknowledged messages checked",
		rep.Sessions, rep.Turns, rep.ToolCalls, rep.Reruns, rep.Interrupted, rep.Acknowledged)
}

// TestAgentUnderFaults runs the agent in this process under faults.
func TestAgentUnderFaults(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	acks := make(chan []chaos.Ack)
	go func() { acks <- readAcks(r) }()
	runErr := runAgent(t.Context(), dir, 7, w)
	_ = w.Close()
	if runErr != nil {
		t.Fatal(runErr)
	}
	check(t, dir, <-acks)
}

// TestAgentSurvivesKills re-executes this test binary as a worker that
// runs the agent, SIGKILLs it after a random delay, again and again, then
// lets a last worker finish every turn, and checks the journals.
func TestAgentSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := filepath.Join(t.TempDir(), "data")
	rng := rand.New(rand.NewPCG(1, 2))
	var acks []chaos.Ack
	for kill := range 6 {
		delay := 100*time.Millisecond + time.Duration(rng.Int64N(int64(200*time.Millisecond)))
		acks = append(acks, runWorker(t, dir, delay)...)
		t.Logf("kill %d after %v: %d messages acknowledged so far", kill+1, delay, len(acks))
	}
	acks = append(acks, runWorker(t, dir, 0)...)
	check(t, dir, acks)
}

// runWorker runs a worker on dir, SIGKILLs it after delay (lets it finish
// when delay is zero), and returns the messages it acknowledged.
func runWorker(t *testing.T, dir string, delay time.Duration) []chaos.Ack {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if delay > 0 {
		timer := time.AfterFunc(delay, func() { _ = cmd.Process.Kill() })
		defer timer.Stop()
	}
	acks := readAcks(out)
	err = cmd.Wait()
	if delay == 0 && err != nil {
		t.Fatalf("the last worker failed: %v", err)
	}
	return acks
}

// readAcks reads the "ack" lines of a worker until it ends.
func readAcks(r interface{ Read([]byte) (int, error) }) []chaos.Ack {
	var acks []chaos.Ack
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) == 4 && f[0] == "ack" {
			acks = append(acks, chaos.Ack{Session: f[1], TurnID: f[2], Text: f[3]})
		}
	}
	return acks
}
