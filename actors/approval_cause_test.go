package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// TestApprovals_TimeoutCauseReachesTheApprover leaves approvals unanswered
// past the approval timeout, many times over: Config.Approver's context
// always ends with toolsys.ErrApprovalTimeout as its cause, so that a
// prompt can say the approval expired rather than that the call was
// cancelled. The runtime's own wait sees the timeout first (Go closes a
// context's Done before it cancels its children) and must hand the cause
// on, not cancel with a cause of its own.
func TestApprovals_TimeoutCauseReachesTheApprover(t *testing.T) {
	const rounds = 300
	causes := make(chan error, rounds)
	approver := toolsys.ApproverFunc(func(ctx context.Context, _ toolsys.ApprovalRequest) (toolsys.Approval, error) {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return toolsys.Approval{}, ctx.Err()
	})
	tool := &funcTool{name: "write", perm: toolsys.PermWrite, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{Content: "written"}, nil
	}}
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{ApprovalTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
	reg.MustRegister(tool)
	f := newFixture(t, toolScript("done", scripted.ToolCall{Name: "write", Arguments: "{}"}), nil, func(c *actors.Config) {
		c.Tools, c.Approver = reg, approver
	})
	for range rounds {
		res, err := f.sess.Submit(t.Context(), messages.UserText("write it"))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ToolCalls) != 1 || !res.ToolCalls[0].IsError {
			t.Fatalf("tool calls = %+v, want one refused", res.ToolCalls)
		}
	}
	for i := range rounds {
		select {
		case c := <-causes:
			if !errors.Is(c, toolsys.ErrApprovalTimeout) {
				t.Errorf("approval %d: the approver's context ended with cause %v, want toolsys.ErrApprovalTimeout", i+1, c)
			}
		case <-t.Context().Done():
			t.Fatalf("the approver saw %d contexts end, want %d", i, rounds)
		}
	}
}
