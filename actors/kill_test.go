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
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// The kill test re-executes the test binary as a child that runs a turn on a
// data directory, SIGKILLs it at a chosen point, then resumes the session
// in this process.
const (
	killEnvPoint = "AGCORE_KILL_POINT"
	killEnvDir   = "AGCORE_KILL_DIR"
	killEnvLog   = "AGCORE_KILL_LOG"
)

// sideEffect is a slow, non-idempotent tool that appends a line to a file
// each time it runs.
func sideEffect(logPath string, hold bool) *funcTool {
	return &funcTool{name: "charge", perm: toolsys.PermWrite, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return toolsys.Result{}, err
		}
		_, err = fmt.Fprintln(f, "charged")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return toolsys.Result{}, err
		}
		if hold {
			fmt.Println("TOOL-RUNNING")
			<-ctx.Done()
			return toolsys.Result{}, ctx.Err()
		}
		return toolsys.Result{Content: "charged once"}, nil
	}}
}

func killScript(slowFinal bool) scripted.Script {
	final := scripted.Reply{Text: "finished"}
	if slowFinal {
		final.Latency = time.Hour
	}
	return scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "charge", Arguments: "{}"}}}},
		{Match: scripted.Match{Role: messages.RoleTool}, Reply: final},
	}}
}

// TestKillChild is the child's body; it does nothing in a normal run.
func TestKillChild(t *testing.T) {
	point := os.Getenv(killEnvPoint)
	if point == "" {
		t.Skip("runs only as the child of TestKill")
	}
	reg := runAllRegistry(t)
	reg.MustRegister(sideEffect(os.Getenv(killEnvLog), point != "result"))
	rt, err := actors.New(actors.Config{DataDir: os.Getenv(killEnvDir), Durability: memory.DurabilitySync,
		Provider: scripted.MustNew(killScript(point == "result"), scripted.Options{}), Tools: reg,
		Limits: actors.Limits{ToolTimeout: -1}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := rt.Open(context.Background(), "k1")
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range sess.Stream(context.Background(), messages.UserText("charge the card"), actors.WithTurnID("t1")) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.(type) {
		case messages.TurnStarted:
			fmt.Println("ACK")
		case messages.ToolFinished:
			fmt.Println("TOOL-DONE")
		}
	}
	t.Fatal("the turn ended before the parent killed the child")
}

func TestKill_ResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	tests := []struct {
		point, marker string
		exactlyOnce   bool
	}{
		{"ack", "ACK", false},
		{"tool", "TOOL-RUNNING", true},
		{"result", "TOOL-DONE", true},
	}
	for _, tt := range tests {
		t.Run(tt.point, func(t *testing.T) {
			dir := t.TempDir()
			logPath := filepath.Join(dir, "charges.log")
			dataDir := filepath.Join(dir, "data")
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), killEnvPoint+"="+tt.point, killEnvDir+"="+dataDir, killEnvLog+"="+logPath)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			seen := false
			for sc.Scan() {
				if strings.TrimSpace(sc.Text()) == tt.marker {
					seen = true
					break
				}
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if !seen {
				t.Fatalf("the child never printed %s", tt.marker)
			}

			rec := &recorder{}
			reg := runAllRegistry(t)
			reg.MustRegister(sideEffect(logPath, false))
			cfg := actors.Config{DataDir: dataDir, Provider: scripted.MustNew(killScript(false), scripted.Options{}), Tools: reg}
			cfg.Hooks.Register(actors.PreRequest, rec.hook(actors.HookResult{}))
			rt, err := actors.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Shutdown(context.Background())
			sess, err := rt.Open(ctx, "k1")
			if err != nil {
				t.Fatal(err)
			}
			res, err := sess.Submit(ctx, messages.UserText("charge the card"), actors.WithTurnID("t1"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != messages.OutcomeCompleted || res.Text != "finished" || res.Turn != 0 {
				t.Fatalf("resumed turn = %+v", res)
			}
			data, _ := os.ReadFile(logPath)
			runs := strings.Count(string(data), "charged")
			if runs > 1 || (tt.exactlyOnce && runs != 1) {
				t.Fatalf("the non-idempotent tool ran %d times", runs)
			}
			st, err := sess.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.NextTurn != 1 || st.Running {
				t.Fatalf("status = %+v", st)
			}
			if last := rec.last(actors.PreRequest); last != nil {
				users := 0
				for _, m := range last.Request.Messages {
					if m.Role == messages.RoleUser {
						users++
						if m.Text() != "charge the card" {
							t.Errorf("user message = %q", m.Text())
						}
					}
				}
				if users != 1 {
					t.Errorf("the resumed request holds %d user messages, want 1", users)
				}
			}
		})
	}
}
