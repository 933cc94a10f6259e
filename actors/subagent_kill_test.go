package actors_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

const killEnvSwarm = "AGCORE_KILL_SWARM"

// jobTool is a non-idempotent tool that appends its session id to a file
// each time it runs. In session holdFor it then waits until cancelled.
type jobTool struct {
	logPath string
	holdFor string
}

func (j *jobTool) Name() string        { return "job" }
func (j *jobTool) Description() string { return "does one job" }
func (j *jobTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (j *jobTool) Permission() toolsys.Permission { return toolsys.PermWrite }
func (j *jobTool) SecretParams() []string         { return nil }
func (j *jobTool) Idempotent() bool               { return false }
func (j *jobTool) Execute(ctx context.Context, _ json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	f, err := os.OpenFile(j.logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return toolsys.Result{}, err
	}
	_, err = fmt.Fprintln(f, tc.SessionID)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return toolsys.Result{}, err
	}
	if tc.SessionID == j.holdFor {
		fmt.Println("HOLD")
		<-ctx.Done()
		return toolsys.Result{}, ctx.Err()
	}
	return toolsys.Result{Content: "job done"}, nil
}

// swarmKillScript: the coordinator spawns three workers, each of which
// calls job once.
func swarmKillScript() scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Exact: "run the jobs"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			spawnCall("job 0", "job"), spawnCall("job 1", "job"), spawnCall("job 2", "job")}}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "job"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "job", Arguments: "{}"}}}},
		{Match: scripted.Match{Tool: "job"}, Reply: scripted.Reply{Text: "worker finished"}},
		{Match: scripted.Match{Tool: actors.SpawnAgentToolName}, Reply: scripted.Reply{Text: "all jobs done"}},
	}}
}

// The third worker's session: the coordinator's third call of its first
// reply.
const heldWorker = "k2:sub:call_1_3"

// TestKillSwarmChild is the body of the killed process; it does nothing in
// a normal run.
func TestKillSwarmChild(t *testing.T) {
	if os.Getenv(killEnvSwarm) == "" {
		t.Skip("runs only as the child of TestKill_SwarmResume")
	}
	reg := runAllRegistry(t)
	reg.MustRegister(&jobTool{logPath: os.Getenv(killEnvLog), holdFor: heldWorker})
	rt, err := actors.New(actors.Config{DataDir: os.Getenv(killEnvDir), Durability: memory.DurabilitySync,
		Provider: scripted.MustNew(swarmKillScript(), scripted.Options{}), Tools: reg,
		SubAgents: actors.SubAgents{Enabled: true}, Limits: actors.Limits{ToolTimeout: -1}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := rt.Open(context.Background(), "k2")
	if err != nil {
		t.Fatal(err)
	}
	finished := 0
	for ev, err := range sess.Stream(context.Background(), messages.UserText("run the jobs"), actors.WithTurnID("t1")) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(messages.SubAgentEnded); ok {
			if finished++; finished == 2 {
				fmt.Println("TWO-FINISHED")
			}
		}
	}
	t.Fatal("the turn ended before the parent killed the child")
}

func TestKill_SwarmResume(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "jobs.log")
	dataDir := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKillSwarmChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killEnvSwarm+"=1", killEnvDir+"="+dataDir, killEnvLog+"="+logPath)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	held, two := false, false
	for sc := bufio.NewScanner(out); !(held && two) && sc.Scan(); {
		switch strings.TrimSpace(sc.Text()) {
		case "HOLD":
			held = true
		case "TWO-FINISHED":
			two = true
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !held || !two {
		t.Fatalf("the child process printed HOLD %v, TWO-FINISHED %v", held, two)
	}

	// Resume in this process, counting each session's model calls.
	var mu sync.Mutex
	calls := map[string]int{}
	reg := runAllRegistry(t)
	reg.MustRegister(&jobTool{logPath: logPath})
	cfg := actors.Config{DataDir: dataDir, Provider: scripted.MustNew(swarmKillScript(), scripted.Options{}), Tools: reg,
		SubAgents: actors.SubAgents{Enabled: true}}
	cfg.Hooks.Register(actors.PreRequest, actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
		mu.Lock()
		defer mu.Unlock()
		calls[hc.Session]++
		return actors.HookResult{}
	}))
	rt, err := actors.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	sess, err := rt.Open(ctx, "k2")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.Submit(ctx, messages.UserText("run the jobs"), actors.WithTurnID("t1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != messages.OutcomeCompleted || res.Text != "all jobs done" {
		t.Fatalf("resumed turn = %+v", res)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for line := range strings.Lines(string(data)) {
		runs[strings.TrimSpace(line)]++
	}
	workers := []string{"k2:sub:call_1_1", "k2:sub:call_1_2", heldWorker}
	for _, w := range workers {
		if runs[w] != 1 {
			t.Errorf("the job of %s ran %d times, want once (all runs: %v)", w, runs[w], runs)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	finishedCalls := 0
	for _, w := range workers[:2] {
		finishedCalls += calls[w]
	}
	if finishedCalls != 0 {
		t.Errorf("finished workers made %d model calls after the restart, want 0 (calls: %v)", finishedCalls, calls)
	}
	if calls[heldWorker] != 1 {
		t.Errorf("the interrupted worker made %d model calls after the restart, want 1 (calls: %v)", calls[heldWorker], calls)
	}
	rep, err := sess.Usage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.SubAgents) != 3 {
		t.Errorf("sub-agents finished = %+v, want 3", rep.SubAgents)
	}
}
