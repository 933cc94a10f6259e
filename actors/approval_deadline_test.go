package actors_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// waitArmed waits until clock has armed n more timers of d.
func waitArmed(t *testing.T, clock *manualClock, d time.Duration, n int) {
	t.Helper()
	for n > 0 {
		select {
		case got := <-clock.armed:
			if got == d {
				n--
			}
		case <-t.Context().Done():
			t.Fatalf("no timer of %v was armed", d)
		}
	}
}

// TestApprovals_DeadlineWaitsForTheAnswer checks that a tool call's
// deadline does not run while the call waits for approval: the deadline's
// timer firing during the wait does not end the call, and once the call is
// approved the deadline is armed again, whole, and bounds the tool.
func TestApprovals_DeadlineWaitsForTheAnswer(t *testing.T) {
	const timeout = 30 * time.Second
	for _, block := range []bool{false, true} {
		name := map[bool]string{false: "the tool runs after a long wait", true: "the deadline bounds the approved tool"}[block]
		t.Run(name, func(t *testing.T) {
			var runs atomic.Int32
			entered := make(chan struct{}, 1)
			tool := &funcTool{name: "write", perm: toolsys.PermWrite, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
				runs.Add(1)
				if block {
					entered <- struct{}{}
					<-ctx.Done()
					return toolsys.Result{}, ctx.Err()
				}
				return toolsys.Result{Content: "written"}, nil
			}}
			perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{ApprovalTimeout: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
			reg.MustRegister(tool)
			clock := newManualClock()
			f := newFixture(t, toolScript("done", scripted.ToolCall{ID: "c1", Name: "write", Arguments: "{}"}), nil, func(c *actors.Config) {
				c.Tools, c.Approver, c.Clock = reg, actors.ManualApprover(), clock
				c.Limits.ToolTimeout = timeout
			})
			var finished []messages.ToolFinished
			for ev, err := range f.sess.Stream(t.Context(), messages.UserText("write it")) {
				if err != nil {
					t.Fatal(err)
				}
				switch e := ev.(type) {
				case messages.ApprovalPending:
					// The call has waited past its deadline for an answer.
					clock.fire(timeout)
					if err := f.rt.Approve(t.Context(), "s1", e.CallID, true, ""); err != nil {
						t.Fatalf("Approve: %v", err)
					}
					if block {
						<-entered
						waitArmed(t, clock, timeout, 2)
						clock.fire(timeout)
					}
				case messages.ToolFinished:
					finished = append(finished, e)
				}
			}
			want := "written"
			if block {
				want = "timed out after 30s"
			}
			if len(finished) != 1 || !strings.Contains(finished[0].Content, want) || runs.Load() != 1 {
				t.Fatalf("tool results %+v after %d runs, want one run ending with %q", finished, runs.Load(), want)
			}
		})
	}
}
