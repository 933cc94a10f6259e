package toolsys

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// deadlineParams are the arguments of the deadline test tool.
type deadlineParams struct{}

// deadlineTool reports its context's deadline, and blocks until the
// context ends when block is set.
type deadlineTool struct {
	block bool
	saw   chan time.Time
}

func (deadlineTool) Name() string           { return "slow_write" }
func (deadlineTool) Description() string    { return "Writes slowly." }
func (deadlineTool) Permission() Permission { return PermWrite }
func (deadlineTool) SecretParams() []string { return nil }
func (d deadlineTool) Execute(ctx context.Context, _ deadlineParams, _ *Context) (Result, error) {
	dl, _ := ctx.Deadline()
	d.saw <- dl
	if d.block {
		<-ctx.Done()
		return Result{}, ctx.Err()
	}
	return Result{Content: "written"}, nil
}

// TestWithCallTimeout_StartsAfterApproval checks that the call's deadline
// starts once the approver has answered: an approval that takes longer
// than the deadline still lets the tool run, with the whole deadline, and
// the tool is stopped when that deadline passes.
func TestWithCallTimeout_StartsAfterApproval(t *testing.T) {
	for _, block := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var approved time.Time
			perms, err := NewPermissions(PermissionConfig{ApprovalTimeout: time.Hour, Approver: ApproverFunc(func(ctx context.Context, _ ApprovalRequest) (Approval, error) {
				time.Sleep(5 * time.Minute) // a human who takes five minutes
				approved = time.Now()
				return Approval{Allow: true}, nil
			})})
			if err != nil {
				t.Fatal(err)
			}
			reg := NewRegistry(Config{Permissions: perms})
			tool := deadlineTool{block: block, saw: make(chan time.Time, 1)}
			if err := RegisterTyped[deadlineParams](reg, tool); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			res, err := reg.Call(WithCallTimeout(t.Context(), time.Minute), "slow_write", []byte(`{}`), nil)
			dl := <-tool.saw
			if want := approved.Add(time.Minute); !dl.Equal(want) {
				t.Errorf("the tool's deadline is %v after the start, want a minute after the approval (%v after the start)", dl.Sub(start), want.Sub(start))
			}
			switch {
			case !block && (err != nil || res.Content != "written"):
				t.Errorf("Call = %+v, %v; want the tool to run", res, err)
			case block && !errors.Is(err, context.DeadlineExceeded):
				t.Errorf("Call = %+v, %v; want the deadline to stop the tool", res, err)
			case block && time.Since(start) != 6*time.Minute:
				t.Errorf("the call took %v, want 6m (5m of approval, then the 1m deadline)", time.Since(start))
			}
		})
	}
}
