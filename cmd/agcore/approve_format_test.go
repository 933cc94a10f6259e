package main

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/toolsys"
)

// bashRequest is an approval request of the bash tool for command, with
// more arguments when extra is not empty (JSON object members).
func bashRequest(command, extra string) toolsys.ApprovalRequest {
	args := `{"command":` + jsonString(command)
	if extra != "" {
		args += "," + extra
	}
	return toolsys.ApprovalRequest{
		Request: toolsys.Request{Tool: "bash", Permission: toolsys.PermExecute, Args: []byte(args + "}"), Subject: command},
		Reason:  "tool bash needs execute permission in accept-edits mode",
		Timeout: toolsys.DefaultApprovalTimeout,
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			b.WriteString(`\u00` + "0123456789abcdef"[r>>4:r>>4+1] + "0123456789abcdef"[r&15:r&15+1])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestFormatApproval renders the questions of a few calls, off a
// terminal: what a call holds is shown as it is, escapes included.
func TestFormatApproval(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		name     string
		req      toolsys.ApprovalRequest
		deadline time.Time
		want     string
	}{
		{
			name:     "command with other arguments",
			req:      bashRequest("go test ./...", `"description":"run the tests"`),
			deadline: now.Add(59*time.Second + 400*time.Millisecond),
			want: `? bash needs approval: tool bash needs execute permission in accept-edits mode
  command: go test ./...
  other arguments: {"description":"run the tests"}
  y: allow once · a: allow bash with this command until agcore exits · n [reason]: deny
allow bash? (59s left) [y/a/n] `,
		},
		{
			name: "terminal escapes and a bidirectional override",
			req:  bashRequest("printf '\x1b]0;owned\x07' && echo \u202egnp.exe", ""),
			want: `? bash needs approval: tool bash needs execute permission in accept-edits mode
  command: printf '\x1b]0;owned\x07' && echo \u202egnp.exe
  y: allow once · a: allow bash with this command until agcore exits · n [reason]: deny
allow bash? [y/a/n] `,
		},
		{
			name: "script on several lines",
			req:  bashRequest("cd src\ngo vet ./...", ""),
			want: `? bash needs approval: tool bash needs execute permission in accept-edits mode
  command:
  │ cd src
  │ go vet ./...
  y: allow once · a: allow bash with this command until agcore exits · n [reason]: deny
allow bash? [y/a/n] `,
		},
		{
			name: "a call the rules cannot vouch for",
			req: func() toolsys.ApprovalRequest {
				r := bashRequest("echo hi > out.txt", "")
				r.Subjects.Opaque = "a redirection to a file"
				return r
			}(),
			want: `? bash needs approval: tool bash needs execute permission in accept-edits mode
  command: echo hi > out.txt
  y: allow once · a: allow this exact bash call (same arguments) until agcore exits · n [reason]: deny
allow bash? [y/a/n] `,
		},
		{
			name: "subject apart from the arguments",
			req: toolsys.ApprovalRequest{Request: toolsys.Request{Tool: "write_file", Permission: toolsys.PermWrite,
				Args: []byte(`{"path":"./docs/../docs/a.md","content":"hello"}`), Subject: "docs/a.md"}},
			want: `? write_file needs approval
  subject: docs/a.md
  other arguments: {"path":"./docs/../docs/a.md","content":"hello"}
  y: allow once · a: allow write_file on this subject until agcore exits · n [reason]: deny
allow write_file? [y/a/n] `,
		},
		{
			name: "subject that is the arguments",
			req: toolsys.ApprovalRequest{Request: toolsys.Request{Tool: "mcp__fs__delete", Permission: toolsys.PermExecute,
				Args: []byte(`{"id": 7}`), Subject: `{"id":7}`}, Reason: "tool mcp__fs__delete needs execute permission in ask mode"},
			deadline: now.Add(4*time.Minute + 59*time.Second),
			want: `? mcp__fs__delete needs approval: tool mcp__fs__delete needs execute permission in ask mode
  arguments: {"id":7}
  y: allow once · a: allow mcp__fs__delete with these arguments until agcore exits · n [reason]: deny
allow mcp__fs__delete? (4m59s left) [y/a/n] `,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := formatApproval(tt.req, tt.deadline, now, term{}, nil)
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestFormatApproval_Redacts shows a call whose command holds a credential
// the process knows: the prompt masks it, and the refusal suggests no rule
// that holds it.
func TestFormatApproval_Redacts(t *testing.T) {
	const secret = "s3cr3t-token-value-42"
	r := redact.New()
	r.Add(secret, "")
	req := bashRequest("curl -H 'Authorization: Bearer "+secret+"' https://example.com", "")
	out := formatApproval(req, time.Time{}, time.Now(), term{}, r)
	if strings.Contains(out, secret) || !strings.Contains(out, redact.Mask) {
		t.Errorf("the prompt shows the credential:\n%s", out)
	}
	var errw strings.Builder
	a := newApprover("standard input is not a terminal", &errw, r).refuse(req, "standard input is not a terminal")
	if strings.Contains(errw.String()+a.Reason, secret) {
		t.Errorf("the refusal shows the credential:\n%s\n%s", errw.String(), a.Reason)
	}
}

// TestAllowFlags checks the --allow flags a refusal suggests: each lets
// the call run without asking, and a subject that cannot be written into
// a rule falls back to the whole tool.
func TestAllowFlags(t *testing.T) {
	withParts := bashRequest("cd src && go test ./...", "")
	withParts.Subjects.Parts = []string{"cd src", "go test ./..."}
	opaque := bashRequest("echo hi > out.txt", "")
	opaque.Subjects.Opaque = "a redirection to a file"
	tests := []struct {
		name string
		req  toolsys.ApprovalRequest
		want string
	}{
		{"command", bashRequest("touch made.txt", ""), `--allow 'bash(touch made.txt)'`},
		{"quotes", bashRequest("echo 'it''s'", ""), `--allow 'bash(echo '\''it'\'''\''s'\'')'`},
		{"one rule per command", withParts, `--allow 'bash(cd src)' --allow 'bash(go test ./...)'`},
		{"opaque", opaque, `--allow bash (every bash call)`},
		{"glob characters", bashRequest("rm *.o", ""), `--allow bash (every bash call)`},
		{"control characters", bashRequest("echo \x1b[2J", ""), `--allow bash (every bash call)`},
		{"long", bashRequest("echo "+strings.Repeat("x", 100), ""), `--allow bash (every bash call)`},
		{"path", toolsys.ApprovalRequest{Request: toolsys.Request{Tool: "write_file", Permission: toolsys.PermWrite,
			Args: []byte(`{"path":"docs/a.md"}`), Subject: "docs/a.md"}}, `--allow 'write_file(docs/a.md)'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := allowFlags(tt.req, nil); got != tt.want {
				t.Errorf("allowFlags = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestParseAnswer reads the answers the prompt takes.
func TestParseAnswer(t *testing.T) {
	tests := []struct {
		line   string
		verb   byte
		reason string
		ok     bool
	}{
		{"y", 'y', "", true}, {" YES ", 'y', "", true}, {"a", 'a', "", true}, {"Always", 'a', "", true},
		{"n", 'n', "", true}, {"no", 'n', "", true}, {"n  use make test ", 'n', "use make test", true},
		{"N \x1b[31mred", 'n', "[31mred", true},
		{"", 0, "", false}, {"yy", 0, "", false}, {"y please", 0, "", false}, {"a b", 0, "", false}, {"/cancel", 0, "", false},
	}
	for _, tt := range tests {
		verb, reason, ok := parseAnswer(tt.line)
		if verb != tt.verb || reason != tt.reason || ok != tt.ok {
			t.Errorf("parseAnswer(%q) = %q, %q, %v; want %q, %q, %v", tt.line, verb, reason, ok, tt.verb, tt.reason, tt.ok)
		}
	}
}

// FuzzApprovalPrompt renders the question about, and the refusal of, a
// call whose tool name, subject, arguments and reason are arbitrary (they
// come from the model), and checks that no character a terminal would act
// on or show otherwise than written gets through, that a plain one-line
// subject is shown as it is, and that every suggested rule parses.
func FuzzApprovalPrompt(f *testing.F) {
	f.Add("bash", "touch made.txt", `{"command":"touch made.txt"}`, "tool bash needs execute permission in ask mode")
	f.Add("bash", "printf '\x1b[2J'\n\u202eexe", `{"command":1}`, "a hook asks")
	f.Add("mcp__x__y", `{"a":"b"}`, `{"a":"b"}`, "")
	f.Add("w\x00", "a\xffb", "not json", "\u2028")
	f.Fuzz(func(t *testing.T, tool, subject, args, reason string) {
		req := toolsys.ApprovalRequest{Request: toolsys.Request{Tool: tool, Permission: toolsys.PermExecute,
			Args: []byte(args), Subject: subject}, Reason: reason, Timeout: time.Minute}
		now := time.Unix(0, 0)
		out := formatApproval(req, now.Add(time.Minute), now, term{}, nil)
		var errw strings.Builder
		refusal := newApprover("standard input is not a terminal", &errw, nil).refuse(req, "standard input is not a terminal")
		for _, s := range []string{out, errw.String(), allowFlags(req, nil)} {
			for _, c := range s {
				if c != '\n' && c != '\t' && (unicode.IsControl(c) || unicode.In(c, unicode.Cf, unicode.Zl, unicode.Zp)) {
					t.Fatalf("output holds %U: %q", c, s)
				}
			}
		}
		if !strings.Contains(refusal.Reason, "--allow") {
			t.Errorf("the refusal does not say what to change: %q", refusal.Reason)
		}
		if plain := strings.TrimSpace(subject); plain == subject && subject != "" && !strings.Contains(subject, "\n") &&
			safeText(subject) == subject && redact.New().String(subject) == subject && len(subject) < promptSubjectRunes &&
			!strings.Contains(out, subject) {
			t.Errorf("the prompt does not show the subject %q as it is:\n%s", subject, out)
		}
		for _, rule := range subjectRules(req, nil) {
			if _, err := toolsys.ParseRule(rule); err != nil {
				t.Errorf("suggested rule %q: %v", rule, err)
			}
		}
	})
}
