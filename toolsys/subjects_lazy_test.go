package toolsys

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
)

// countingSubjectTool counts how often the registry asks for its rule
// subject, which a tool may compute at a cost (a file tool canonicalises a
// path, a shell tool parses a command).
type countingSubjectTool struct {
	rawTool
	asked atomic.Int64
}

func (c *countingSubjectTool) RuleSubject(json.RawMessage, *Context) string {
	c.asked.Add(1)
	return "subject"
}

// TestRegistry_SubjectOnlyWhenRead checks that a call's rule subject is
// computed exactly when something may read it: an approver the call can
// reach (here the one the runtime puts in the context), a hook or a rule;
// a call the mode admits or refuses outright never computes it.
func TestRegistry_SubjectOnlyWhenRead(t *testing.T) {
	tests := []struct {
		name      string
		cfg       PermissionConfig
		perm      Permission
		wantAsked bool // the subject is computed, and the approver is asked with it
	}{
		{"ask mode admits read-only", PermissionConfig{Mode: ModeAsk}, PermReadOnly, false},
		{"ask mode asks for write", PermissionConfig{Mode: ModeAsk}, PermWrite, true},
		{"accept-edits admits write", PermissionConfig{Mode: ModeAcceptEdits}, PermWrite, false},
		{"accept-edits asks for execute", PermissionConfig{Mode: ModeAcceptEdits}, PermExecute, true},
		{"read-only mode refuses write without asking", PermissionConfig{Mode: ModeReadOnly}, PermWrite, false},
		{"bypass admits execute", PermissionConfig{Mode: ModeBypass}, PermExecute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPermissions(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := NewRegistry(Config{Permissions: p})
			tool := &countingSubjectTool{rawTool: rawTool{name: "t", perm: tt.perm, run: func(context.Context, json.RawMessage) (Result, error) {
				return Result{Content: "ran"}, nil
			}}}
			r.MustRegister(tool)
			var asked atomic.Value
			ctx := WithApprover(t.Context(), ApproverFunc(func(_ context.Context, req ApprovalRequest) (Approval, error) {
				asked.Store(req.Subject)
				return Approval{Allow: true}, nil
			}))
			if _, err := r.Call(ctx, "t", json.RawMessage(`{"a":1}`), nil); err != nil {
				t.Fatal(err)
			}
			if got := tool.asked.Load() > 0; got != tt.wantAsked {
				t.Errorf("RuleSubject called %d times, want it called: %v", tool.asked.Load(), tt.wantAsked)
			}
			if s, _ := asked.Load().(string); tt.wantAsked && s != "subject" {
				t.Errorf("approver saw subject %q, want %q", s, "subject")
			}
		})
	}

	// A configured rule reads the subject whatever the mode.
	p, err := NewPermissions(PermissionConfig{Mode: ModeBypass, Deny: []string{"t(rm *)"}})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(Config{Permissions: p})
	tool := &countingSubjectTool{rawTool: rawTool{name: "t", perm: PermReadOnly, run: func(context.Context, json.RawMessage) (Result, error) {
		return Result{}, nil
	}}}
	r.MustRegister(tool)
	if _, err := r.Call(t.Context(), "t", json.RawMessage(`{}`), nil); err != nil || tool.asked.Load() != 1 {
		t.Errorf("with a deny rule: RuleSubject called %d times, err %v; want once", tool.asked.Load(), err)
	}
}
