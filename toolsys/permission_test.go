package toolsys

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// approverAnswer returns an approver that always gives a.
func approverAnswer(a Approval, calls *int) Approver {
	return ApproverFunc(func(context.Context, ApprovalRequest) (Approval, error) {
		*calls++
		return a, nil
	})
}

func hook(d Decision, reason string) PermissionHook {
	return func(context.Context, Request) (Decision, string) { return d, reason }
}

func TestPermissions_Pipeline(t *testing.T) {
	yes := Approval{Allow: true}
	no := Approval{Allow: false, Reason: "not today"}
	tests := []struct {
		name      string
		cfg       PermissionConfig
		req       Request
		wantStage Stage // "" = allowed
		wantAsked bool
		wantText  string
	}{
		// hooks come first
		{"hook deny beats everything", PermissionConfig{Mode: ModeBypass, Hooks: []PermissionHook{hook(DecisionDeny, "blocked by policy")}},
			Request{Tool: "read_file", Permission: PermReadOnly}, StageHook, false, "blocked by policy"},
		{"first decisive hook wins", PermissionConfig{Mode: ModeBypass, Hooks: []PermissionHook{hook(DecisionContinue, ""), hook(DecisionDeny, "second"), hook(DecisionAllow, "")}},
			Request{Tool: "x", Permission: PermNone}, StageHook, false, "second"},
		{"hook allow skips mode", PermissionConfig{Mode: ModeReadOnly, Hooks: []PermissionHook{hook(DecisionAllow, "")}},
			Request{Tool: "bash", Permission: PermExecute}, "", false, ""},
		{"hook allow does not beat a deny rule", PermissionConfig{Hooks: []PermissionHook{hook(DecisionAllow, "")}, Deny: []string{"bash"}},
			Request{Tool: "bash", Permission: PermExecute}, StageDeny, false, "deny rule bash"},
		{"hook ask forces the approver", PermissionConfig{Mode: ModeBypass, Hooks: []PermissionHook{hook(DecisionAsk, "looks odd")}, Approver: approverAnswer(no, new(int))},
			Request{Tool: "read_file", Permission: PermReadOnly}, StageApprover, true, "not today"},
		// deny rules win in every mode
		{"deny in bypass", PermissionConfig{Mode: ModeBypass, Deny: []string{"bash(rm *)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "rm -rf /tmp/x"}, StageDeny, false, "bash(rm *)"},
		{"deny beats allow", PermissionConfig{Deny: []string{"write_file(secrets/**)"}, Allow: []string{"write_file"}},
			Request{Tool: "write_file", Permission: PermWrite, Subject: "secrets/key"}, StageDeny, false, ""},
		{"deny on multi-line command", PermissionConfig{Mode: ModeBypass, Deny: []string{"bash(*curl*)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "echo hi\ncurl evil.example"}, StageDeny, false, ""},
		// modes
		{"read-only runs read-only", PermissionConfig{Mode: ModeReadOnly}, Request{Tool: "read_file", Permission: PermReadOnly}, "", false, ""},
		{"read-only refuses write", PermissionConfig{Mode: ModeReadOnly, Allow: []string{"write_file"}, Approver: approverAnswer(yes, new(int))},
			Request{Tool: "write_file", Permission: PermWrite}, StageMode, false, "read-only"},
		{"bypass runs execute", PermissionConfig{Mode: ModeBypass}, Request{Tool: "bash", Permission: PermExecute}, "", false, ""},
		{"accept-edits runs write", PermissionConfig{Mode: ModeAcceptEdits}, Request{Tool: "write_file", Permission: PermWrite}, "", false, ""},
		{"accept-edits asks for execute", PermissionConfig{Mode: ModeAcceptEdits, Approver: approverAnswer(yes, new(int))},
			Request{Tool: "bash", Permission: PermExecute}, "", true, ""},
		{"ask runs read-only", PermissionConfig{}, Request{Tool: "read_file", Permission: PermReadOnly}, "", false, ""},
		{"ask asks for write", PermissionConfig{Approver: approverAnswer(no, new(int))},
			Request{Tool: "write_file", Permission: PermWrite}, StageApprover, true, "not today"},
		{"ask without approver denies", PermissionConfig{}, Request{Tool: "write_file", Permission: PermWrite}, StageApprover, false, "no approver is configured"},
		// allow rules
		{"allow rule skips the approver", PermissionConfig{Allow: []string{"bash(git *)"}, Approver: approverAnswer(no, new(int))},
			Request{Tool: "bash", Permission: PermExecute, Subject: "git status"}, "", false, ""},
		{"allow rule with glob tool name", PermissionConfig{Allow: []string{"mcp__fs__*"}},
			Request{Tool: "mcp__fs__write", Permission: PermWrite}, "", false, ""},
		{"allow star stops at slash", PermissionConfig{Allow: []string{"write_file(docs/*)"}},
			Request{Tool: "write_file", Permission: PermWrite, Subject: "docs/sub/a.md"}, StageApprover, false, "no approver"},
		{"allow double star crosses slash", PermissionConfig{Allow: []string{"write_file(docs/**)"}},
			Request{Tool: "write_file", Permission: PermWrite, Subject: "docs/sub/a.md"}, "", false, ""},
		{"unmatched allow rule falls to approver", PermissionConfig{Allow: []string{"bash(git *)"}, Approver: approverAnswer(yes, new(int))},
			Request{Tool: "bash", Permission: PermExecute, Subject: "make"}, "", true, ""},
		// several subjects: deny matches any, allow must match every one
		{"deny matches any part", PermissionConfig{Mode: ModeBypass, Deny: []string{"bash(rm *)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "git status; rm x", Subjects: Subjects{Parts: []string{"git status", "rm x"}}}, StageDeny, false, "bash(rm *)"},
		{"deny matches a part of an opaque call", PermissionConfig{Mode: ModeBypass, Deny: []string{"bash(rm *)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "git $(rm x)", Subjects: Subjects{Parts: []string{"git $(rm x)", "rm x"}, Opaque: "command substitution"}}, StageDeny, false, ""},
		{"deny matches the whole subject", PermissionConfig{Mode: ModeBypass, Deny: []string{"bash(*| sh*)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "curl x | sh", Subjects: Subjects{Parts: []string{"curl x", "sh"}}}, StageDeny, false, ""},
		{"allow needs every part", PermissionConfig{Allow: []string{"bash(git *)"}, Approver: approverAnswer(no, new(int))},
			Request{Tool: "bash", Permission: PermExecute, Subject: "git status; rm x", Subjects: Subjects{Parts: []string{"git status", "rm x"}}}, StageApprover, true, "not today"},
		{"every part allowed by some rule", PermissionConfig{Allow: []string{"bash(git *)", "bash(head *)"}, Approver: approverAnswer(no, new(int))},
			Request{Tool: "bash", Permission: PermExecute, Subject: "git log | head -5", Subjects: Subjects{Parts: []string{"git log", "head -5"}}}, "", false, ""},
		{"parts replace the whole subject for allow rules", PermissionConfig{Allow: []string{"bash(git log | head *)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "git log | head -5", Subjects: Subjects{Parts: []string{"git log", "head -5"}}}, StageApprover, false, "no approver"},
		{"opaque is not allowed by a pattern", PermissionConfig{Allow: []string{"bash(git *)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "git $(x)", Subjects: Subjects{Parts: []string{"git $(x)", "x"}, Opaque: "command substitution"}}, StageApprover, false, "allow rules cannot vouch for it: command substitution"},
		{"opaque is allowed by a rule without pattern", PermissionConfig{Allow: []string{"bash"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "git $(x)", Subjects: Subjects{Opaque: "command substitution"}}, "", false, ""},
		{"opaque runs in bypass", PermissionConfig{Mode: ModeBypass},
			Request{Tool: "bash", Permission: PermExecute, Subject: "git $(x)", Subjects: Subjects{Opaque: "command substitution"}}, "", false, ""},
		// a command that cannot be named: every deny rule with a pattern
		// on the tool refuses it, no allow rule with a pattern vouches
		{"unresolved is refused by any pattern deny rule", PermissionConfig{Mode: ModeBypass, Deny: []string{"bash(rm *)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "$(echo rm) -f v", Subjects: Subjects{Parts: []string{"echo rm", "$(echo rm) -f v"}, Unresolved: "the command name $(echo rm) is only known when the script runs"}},
			StageDeny, false, "deny rule bash(rm *) applies: the command name $(echo rm) is only known when the script runs"},
		{"a match is named before an unresolved command", PermissionConfig{Mode: ModeBypass, Deny: []string{"bash(curl *)", "bash(rm *)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "rm x; $y", Subjects: Subjects{Parts: []string{"rm x", "$y"}, Unresolved: "the command name $y"}},
			StageDeny, false, "matches deny rule bash(rm *)"},
		{"unresolved is not refused by another tool's rule", PermissionConfig{Mode: ModeBypass, Deny: []string{"write_file(secrets/**)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "$x", Subjects: Subjects{Parts: []string{"$x"}, Unresolved: "the command name $x"}}, "", false, ""},
		{"unresolved is refused by a pattern-less deny rule too", PermissionConfig{Mode: ModeBypass, Deny: []string{"bash"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "$x", Subjects: Subjects{Parts: []string{"$x"}, Unresolved: "the command name $x"}}, StageDeny, false, "deny rule bash"},
		{"unresolved is not allowed by a pattern", PermissionConfig{Allow: []string{"bash(*)"}, Approver: approverAnswer(no, new(int))},
			Request{Tool: "bash", Permission: PermExecute, Subject: "$x", Subjects: Subjects{Parts: []string{"$x"}, Unresolved: "the command name $x"}}, StageApprover, true, "not today"},
		{"unresolved is allowed by a rule without pattern", PermissionConfig{Allow: []string{"bash"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "$x", Subjects: Subjects{Parts: []string{"$x"}, Unresolved: "the command name $x"}}, "", false, ""},
		{"the approver is told why allow rules cannot vouch", PermissionConfig{Allow: []string{"bash(git *)"}},
			Request{Tool: "bash", Permission: PermExecute, Subject: "$x", Subjects: Subjects{Parts: []string{"$x"}, Unresolved: "the command name $x"}}, StageApprover, false, "allow rules cannot vouch for it: the command name $x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := false
			if tt.cfg.Approver != nil {
				inner := tt.cfg.Approver
				tt.cfg.Approver = ApproverFunc(func(ctx context.Context, r ApprovalRequest) (Approval, error) {
					asked = true
					return inner.Approve(ctx, r)
				})
			}
			p, err := NewPermissions(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = p.Check(t.Context(), tt.req)
			if asked != tt.wantAsked {
				t.Errorf("approver asked = %v, want %v", asked, tt.wantAsked)
			}
			if tt.wantStage == "" {
				if err != nil {
					t.Fatalf("Check = %v, want allowed", err)
				}
				return
			}
			var pe *PermissionError
			if !errors.As(err, &pe) || pe.Stage != tt.wantStage || !errors.Is(err, ErrPermissionDenied) {
				t.Fatalf("Check = %v, want a denial at stage %q", err, tt.wantStage)
			}
			if pe.Tool != tt.req.Tool || !strings.Contains(err.Error(), tt.wantText) || !strings.Contains(err.Error(), string(tt.wantStage)) {
				t.Errorf("error %q does not name tool %q, stage %q and %q", err, tt.req.Tool, tt.wantStage, tt.wantText)
			}
		})
	}
}

func TestPermissions_ApprovalTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		p, err := NewPermissions(PermissionConfig{
			ApprovalTimeout: 30 * time.Second,
			Approver: ApproverFunc(func(ctx context.Context, _ ApprovalRequest) (Approval, error) {
				<-release // a human who never answers, and ignores ctx
				return Approval{Allow: true}, nil
			}),
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = p.Check(t.Context(), Request{Tool: "bash", Permission: PermExecute})
		var pe *PermissionError
		if !errors.As(err, &pe) || pe.Stage != StageApprover || pe.Reason != "approval expired: no answer within 30s" {
			t.Fatalf("Check = %v, want an approval timeout", err)
		}
		if waited := time.Since(start); waited != 30*time.Second {
			t.Errorf("waited %v, want 30s", waited)
		}
		close(release)
	})
}

func TestPermissions_DefaultTimeoutAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := NewPermissions(PermissionConfig{Approver: ApproverFunc(func(ctx context.Context, _ ApprovalRequest) (Approval, error) {
			<-ctx.Done()
			return Approval{}, ctx.Err()
		})})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = p.Check(t.Context(), Request{Tool: "bash", Permission: PermExecute})
		if !errors.Is(err, ErrPermissionDenied) || time.Since(start) != DefaultApprovalTimeout {
			t.Errorf("Check = %v after %v, want a denial after %v", err, time.Since(start), DefaultApprovalTimeout)
		}

		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			time.Sleep(time.Second) // fake time inside the bubble
			cancel()
		}()
		err = p.Check(ctx, Request{Tool: "bash", Permission: PermExecute})
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrPermissionDenied) {
			t.Errorf("Check after cancel = %v, want context.Canceled and no denial", err)
		}
	})
}

func TestPermissions_ApproverError(t *testing.T) {
	p, err := NewPermissions(PermissionConfig{Approver: ApproverFunc(func(context.Context, ApprovalRequest) (Approval, error) {
		return Approval{}, errors.New("callback unreachable")
	})})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Check(t.Context(), Request{Tool: "bash", Permission: PermExecute})
	if !errors.Is(err, ErrPermissionDenied) || !strings.Contains(err.Error(), "callback unreachable") {
		t.Errorf("Check = %v, want a denial naming the approver failure", err)
	}
}

func TestParseRule(t *testing.T) {
	tests := []struct {
		rule, tool, subject string
		allow, deny         bool
	}{
		{"read_file", "read_file", "anything", true, true},
		{"read_file", "read_files", "", false, false},
		{"mcp__fs__*", "mcp__fs__read", "", true, true},
		{"mcp__fs__*", "mcp__git__read", "", false, false},
		{"bash(git *)", "bash", "git status", true, true},
		{"bash(git *)", "bash", "git checkout feature/x", false, true},
		{"bash(git **)", "bash", "git checkout feature/x", true, true},
		{"bash(git *)", "bash", "gitk", false, false},
		{"write_file(docs/**)", "write_file", "docs/a/b.md", true, true},
		{"write_file(docs/**)", "write_file", "src/a.go", false, false},
		{"write_file(docs/**/*.md)", "write_file", "docs/a.md", true, true},
		{"write_file(docs/**/*.md)", "write_file", "docs/x/y/a.md", true, true},
		{"write_file(docs/**/*.md)", "write_file", "docs/x/y/a.go", false, false},
		{"write_file(a?c)", "write_file", "abc", true, true},
		{"write_file(a?c)", "write_file", "a/c", false, true},
		{"web_fetch(https://example.com/*)", "web_fetch", "https://example.com/x", true, true},
		{"bash(echo (x))", "bash", "echo (x)", true, true},
		// "X *" also matches the command X alone
		{"bash(rm *)", "bash", "rm", true, true},
		{"bash(rm **)", "bash", "rm", true, true},
		{"bash(rm *)", "bash", "rmdir x", false, false},
		{"bash(rm -f *)", "bash", "rm -f", true, true},
		{"bash(rm -f *)", "bash", "rm", false, false},
		{"bash(rm*)", "bash", "rmdir", true, true},
	}
	for _, tt := range tests {
		r, err := ParseRule(tt.rule)
		if err != nil {
			t.Fatalf("ParseRule(%q): %v", tt.rule, err)
		}
		if got := r.matchAllow(tt.tool, tt.subject); got != tt.allow {
			t.Errorf("allow %s on %s(%q) = %v, want %v", tt.rule, tt.tool, tt.subject, got, tt.allow)
		}
		if got := r.matchDeny(tt.tool, tt.subject); got != tt.deny {
			t.Errorf("deny %s on %s(%q) = %v, want %v", tt.rule, tt.tool, tt.subject, got, tt.deny)
		}
		if r.String() != tt.rule {
			t.Errorf("String() = %q", r.String())
		}
	}
	for _, bad := range []string{"", "bash(", "bash()", "(x)", "ba sh", "bash(x", "bash(\xc4)", "\xffbash"} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) succeeded", bad)
		}
	}
	if _, err := NewPermissions(PermissionConfig{Deny: []string{"bash("}}); err == nil || !strings.Contains(err.Error(), "Deny") {
		t.Errorf("NewPermissions with a bad rule = %v, want an error naming Deny", err)
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{ModeAsk, ModeReadOnly, ModeAcceptEdits, ModeBypass} {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := ParseMode("yolo"); err == nil {
		t.Error("ParseMode(yolo) succeeded")
	}
}

func TestPermissions_ContextApprover(t *testing.T) {
	configured := ApproverFunc(func(context.Context, ApprovalRequest) (Approval, error) {
		return Approval{Reason: "configured approver asked"}, nil
	})
	tests := []struct {
		name     string
		cfg      PermissionConfig
		ctxAns   *Approval // nil: no approver on the context
		wantErr  bool
		wantText string
	}{
		{"context approver replaces the configured one", PermissionConfig{Approver: configured}, &Approval{Allow: true}, false, ""},
		{"context approver refuses", PermissionConfig{Approver: configured}, &Approval{Reason: "not on fridays"}, true, "not on fridays"},
		{"context approver without a configured one", PermissionConfig{}, &Approval{Allow: true}, false, ""},
		{"configured approver when the context has none", PermissionConfig{Approver: configured}, nil, true, "configured approver asked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.ApprovalTimeout = 42 * time.Second
			p, err := NewPermissions(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			var got ApprovalRequest
			if tt.ctxAns != nil {
				ans := *tt.ctxAns
				ctx = WithApprover(ctx, ApproverFunc(func(_ context.Context, r ApprovalRequest) (Approval, error) {
					got = r
					return ans, nil
				}))
			}
			err = p.Check(ctx, Request{Tool: "write_file", Permission: PermWrite, CallID: "c1"})
			if (err != nil) != tt.wantErr || (err != nil && !strings.Contains(err.Error(), tt.wantText)) {
				t.Fatalf("Check = %v, want error %v containing %q", err, tt.wantErr, tt.wantText)
			}
			if tt.ctxAns != nil && (got.CallID != "c1" || got.Timeout != 42*time.Second || got.Reason == "") {
				t.Errorf("context approver got %+v, want call c1, a reason and the 42s timeout", got)
			}
		})
	}
	if ApproverFromContext(WithApprover(t.Context(), nil)) != nil {
		t.Error("WithApprover(nil) put an approver in the context")
	}
}

func TestPermissions_TimeoutCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		causes := make(chan error, 2)
		approver := ApproverFunc(func(ctx context.Context, _ ApprovalRequest) (Approval, error) {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return Approval{}, ctx.Err()
		})
		p, err := NewPermissions(PermissionConfig{ApprovalTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		err = p.Check(WithApprover(t.Context(), approver), Request{Tool: "bash", Permission: PermExecute})
		if !errors.Is(err, ErrPermissionDenied) || !errors.Is(<-causes, ErrApprovalTimeout) {
			t.Fatalf("Check = %v, want a timeout denial with cause ErrApprovalTimeout", err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			time.Sleep(time.Second) // fake time inside the bubble
			cancel()
		}()
		err = p.Check(WithApprover(ctx, approver), Request{Tool: "bash", Permission: PermExecute})
		if cause := <-causes; !errors.Is(err, context.Canceled) || errors.Is(cause, ErrApprovalTimeout) {
			t.Fatalf("Check = %v with cause %v, want a cancellation that is not a timeout", err, cause)
		}
	})
}

func TestPermissions_NoApproverNamesTheRemedy(t *testing.T) {
	tests := []struct {
		name        string
		cfg         PermissionConfig
		want, avoid []string
	}{
		{"zero config names the fields", PermissionConfig{},
			[]string{"no approver", "PermissionConfig.Mode", "ModeAcceptEdits", "ModeBypass", "Allow rule", "Approver"}, nil},
		{"a program names its own settings", PermissionConfig{Remedy: "set permissions.mode or add a permissions.allow rule"},
			[]string{"no approver", "permissions.mode", "permissions.allow"}, []string{"PermissionConfig"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPermissions(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = p.Check(t.Context(), Request{Tool: "bash", Permission: PermExecute})
			var pe *PermissionError
			if !errors.As(err, &pe) || pe.Stage != StageApprover {
				t.Fatalf("Check = %v, want a denial by the approver stage", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("denial %q does not name %q", err, w)
				}
			}
			for _, a := range tt.avoid {
				if strings.Contains(err.Error(), a) {
					t.Errorf("denial %q names %q", err, a)
				}
			}
		})
	}
}
