package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// writeTool is a PermWrite tool that counts its runs.
func writeTool(runs *atomic.Int32) *funcTool {
	return &funcTool{name: "write", perm: toolsys.PermWrite, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		runs.Add(1)
		return toolsys.Result{Content: "written"}, nil
	}}
}

// approvalFixture is a runtime whose tools pass a permission pipeline in
// ask mode (writes need approval) with the given approval timeout, and
// whose Config.Approver is approver.
func approvalFixture(t *testing.T, approver toolsys.Approver, timeout time.Duration, runs *atomic.Int32) *fixture {
	t.Helper()
	prov, err := scripted.New(toolScript("done", scripted.ToolCall{ID: "c1", Name: "write", Arguments: "{}"}), scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{ApprovalTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
	reg.MustRegister(writeTool(runs))
	rt, err := actors.NewInMemory(actors.Config{Provider: prov, Tools: reg, Approver: approver})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil && !errors.Is(err, actors.ErrClosed) {
			t.Errorf("Shutdown: %v", err)
		}
	})
	sess, err := rt.Open(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{rt: rt, sess: sess, prov: prov}
}

// approvalEvents returns the approval events of session's journal, as
// "type:call:by:reason" strings.
func approvalEvents(t *testing.T, j memory.Journal, session string) []string {
	t.Helper()
	var out []string
	for e, err := range j.Read(t.Context(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := e.Event.(type) {
		case messages.ApprovalRequested:
			out = append(out, "requested:"+ev.CallID+":"+ev.Tool)
		case messages.ApprovalGranted:
			out = append(out, "granted:"+ev.CallID+":"+ev.By)
		case messages.ApprovalDenied:
			out = append(out, "denied:"+ev.CallID+":"+ev.By+":"+ev.Reason)
		case messages.TurnCancelled:
			out = append(out, "turn_cancelled")
		}
	}
	return out
}

func TestApprovals_Decisions(t *testing.T) {
	policy := func(allow bool, reason string) toolsys.Approver {
		return toolsys.ApproverFunc(func(context.Context, toolsys.ApprovalRequest) (toolsys.Approval, error) {
			return toolsys.Approval{Allow: allow, Reason: reason}, nil
		})
	}
	tests := []struct {
		name     string
		approver toolsys.Approver
		// answer, when set, is given through Runtime.Approve on
		// ApprovalPending.
		answer      *bool
		reason      string
		timeout     time.Duration
		wantRuns    int32
		wantJournal []string
		wantResult  string
	}{
		{name: "policy grants", approver: policy(true, ""), wantRuns: 1,
			wantJournal: []string{"requested:c1:write", "granted:c1:approver"}, wantResult: "written"},
		{name: "policy denies", approver: policy(false, "not in prod"),
			wantJournal: []string{"requested:c1:write", "denied:c1:approver:not in prod"}, wantResult: "not in prod"},
		{name: "caller grants", approver: actors.ManualApprover(), answer: new(true), wantRuns: 1,
			wantJournal: []string{"requested:c1:write", "granted:c1:caller"}, wantResult: "written"},
		{name: "caller denies", approver: actors.ManualApprover(), answer: new(false), reason: "looks risky",
			wantJournal: []string{"requested:c1:write", "denied:c1:caller:looks risky"}, wantResult: "looks risky"},
		{name: "approver fails", approver: toolsys.ApproverFunc(func(context.Context, toolsys.ApprovalRequest) (toolsys.Approval, error) {
			return toolsys.Approval{}, errors.New("callback unreachable")
		}), wantJournal: []string{"requested:c1:write", "denied:c1:approver:approver failed: callback unreachable"}, wantResult: "callback unreachable"},
		{name: "nobody answers", approver: actors.ManualApprover(), timeout: 50 * time.Millisecond,
			wantJournal: []string{"requested:c1:write", "denied:c1:runtime:approval expired: no answer within 50ms"}, wantResult: "approval expired: no answer within 50ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs atomic.Int32
			f := approvalFixture(t, tt.approver, tt.timeout, &runs)
			var pending []messages.ApprovalPending
			var res *messages.TurnEnded
			var finished []messages.ToolFinished
			for ev, err := range f.sess.Stream(t.Context(), messages.UserText("write it")) {
				if err != nil {
					t.Fatal(err)
				}
				switch e := ev.(type) {
				case messages.ApprovalPending:
					pending = append(pending, e)
					list, err := f.sess.Approvals(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					if tt.answer != nil {
						if len(list) != 1 || list[0].CallID != "c1" || list[0].Permission != toolsys.PermWrite || list[0].Expires.IsZero() {
							t.Fatalf("Approvals = %+v, want c1 pending", list)
						}
						if err := f.rt.Approve(t.Context(), "s1", e.CallID, *tt.answer, tt.reason); err != nil {
							t.Fatalf("Approve: %v", err)
						}
					}
				case messages.ToolFinished:
					finished = append(finished, e)
				case messages.TurnEnded:
					res = &e
				}
			}
			if len(pending) != 1 || pending[0].CallID != "c1" || pending[0].Tool != "write" || pending[0].Reason == "" {
				t.Fatalf("ApprovalPending events = %+v, want one for c1", pending)
			}
			if res == nil || res.Outcome != messages.OutcomeCompleted || len(finished) != 1 || !strings.Contains(finished[0].Content, tt.wantResult) {
				t.Fatalf("turn ended %+v with tool results %+v, want completed with %q", res, finished, tt.wantResult)
			}
			if got := runs.Load(); got != tt.wantRuns {
				t.Errorf("tool ran %d times, want %d", got, tt.wantRuns)
			}
			if diff := cmp.Diff(tt.wantJournal, approvalEvents(t, f.rt.Journal(), "s1")); diff != "" {
				t.Errorf("journal (-want +got):\n%s", diff)
			}
			if list, _ := f.sess.Approvals(t.Context()); len(list) != 0 || len(f.rt.Approvals()) != 0 {
				t.Errorf("approvals still pending after the turn: %+v", list)
			}
			if err := f.rt.Approve(t.Context(), "s1", "c1", true, ""); !errors.Is(err, actors.ErrUnknownApproval) {
				t.Errorf("Approve after the decision = %v, want ErrUnknownApproval", err)
			}
		})
	}
}

func TestApprovals_CancelledTurn(t *testing.T) {
	var runs atomic.Int32
	f := approvalFixture(t, actors.ManualApprover(), 0, &runs)
	var ended *messages.TurnEnded
	for ev, err := range f.sess.Stream(t.Context(), messages.UserText("write it")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case messages.ApprovalPending:
			if n := len(f.rt.Approvals()); n != 1 {
				t.Fatalf("runtime lists %d pending approvals, want 1", n)
			}
			if ok, err := f.sess.Cancel(t.Context()); !ok || err != nil {
				t.Fatalf("Cancel = %v, %v", ok, err)
			}
		case messages.TurnEnded:
			ended = &e
		}
	}
	if ended == nil || ended.Outcome != messages.OutcomeCancelled || runs.Load() != 0 {
		t.Fatalf("turn ended %+v after %d runs, want cancelled without running the tool", ended, runs.Load())
	}
	want := []string{"requested:c1:write", "denied:c1:runtime:the turn ended (cancelled by the caller) before an answer", "turn_cancelled"}
	if diff := cmp.Diff(want, approvalEvents(t, f.rt.Journal(), "s1")); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
	if err := f.rt.Approve(t.Context(), "s1", "c1", true, ""); !errors.Is(err, actors.ErrUnknownApproval) {
		t.Errorf("Approve after cancel = %v, want ErrUnknownApproval", err)
	}
}

func TestApprovals_Unknown(t *testing.T) {
	var runs atomic.Int32
	f := approvalFixture(t, actors.ManualApprover(), 0, &runs)
	for _, tt := range []struct{ session, call string }{{"s1", "c9"}, {"nope", "c1"}} {
		if err := f.rt.Approve(t.Context(), tt.session, tt.call, true, ""); !errors.Is(err, actors.ErrUnknownApproval) {
			t.Errorf("Approve(%s, %s) = %v, want ErrUnknownApproval", tt.session, tt.call, err)
		}
	}
}

// TestApprovals_CrashAsksAgain crashes the session while a call waits for
// approval: the restarted session treats the call as never started (it is
// not idempotent, yet it is not answered as interrupted) and asks again.
func TestApprovals_CrashAsksAgain(t *testing.T) {
	var runs atomic.Int32
	f := approvalFixture(t, actors.ManualApprover(), 0, &runs)
	var pending int
	var ended *messages.TurnEnded
	for ev, err := range f.sess.Stream(t.Context(), messages.UserText("write it")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case messages.ApprovalPending:
			pending++
			if pending == 1 {
				if err := f.sess.Fault(errors.New("bug in the session")); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := f.rt.Approve(t.Context(), "s1", e.CallID, true, ""); err != nil {
				t.Fatalf("Approve after restart: %v", err)
			}
		case messages.TurnEnded:
			ended = &e
		}
	}
	if pending != 2 || ended == nil || ended.Outcome != messages.OutcomeCompleted || runs.Load() != 1 {
		t.Fatalf("%d approval requests, turn %+v, %d runs; want 2 requests, a completed turn, 1 run", pending, ended, runs.Load())
	}
	want := []string{"requested:c1:write", "requested:c1:write", "granted:c1:caller"}
	if diff := cmp.Diff(want, approvalEvents(t, f.rt.Journal(), "s1")); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
}
