package actors_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// update rewrites the golden transcripts under testdata instead of
// comparing against them: go test ./actors -run TestGolden -update.
var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata")

// goldenEpoch is the time of the golden runs' fixed clock.
var goldenEpoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// fixedClock always tells goldenEpoch and never fires its timers: the
// golden scenarios wait for nothing but the actors.
type fixedClock struct{}

func (fixedClock) Now() time.Time                              { return goldenEpoch }
func (fixedClock) AfterFunc(time.Duration, func()) func() bool { return func() bool { return true } }

// seqIDs numbers turn ids turn-1, turn-2, ...
func seqIDs() actors.IDs {
	var n atomic.Int64
	return actors.IDFunc(func() string { return fmt.Sprintf("turn-%d", n.Add(1)) })
}

// recordingProvider records the requests that reach the model.
type recordingProvider struct {
	inner providers.Provider
	mu    sync.Mutex
	reqs  []messages.Request
}

func (p *recordingProvider) record(req messages.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	req.Messages = append([]messages.Message(nil), req.Messages...)
	p.reqs = append(p.reqs, req)
}

func (p *recordingProvider) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	p.record(req)
	return p.inner.Chat(ctx, req)
}

func (p *recordingProvider) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	p.record(req)
	return p.inner.Stream(ctx, req)
}

func (p *recordingProvider) requests() []messages.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]messages.Request(nil), p.reqs...)
}

// transcript is what a golden scenario records: the events of the turn
// in the order the stream yielded them, the requests the model saw, and
// the journal of every session the turn wrote.
type transcript struct {
	events   []messages.Event
	requests []messages.Request
	journals map[string][]memory.Entry // by session, sessions in order
	sessions []string
}

// goldenLine is one line of a golden file.
type goldenLine struct {
	Kind string `json:"kind"`
	// Session and Seq name a journal entry.
	Session string          `json:"session,omitempty"`
	Seq     uint64          `json:"seq,omitempty"`
	Type    string          `json:"type,omitempty"`
	At      *time.Time      `json:"at,omitempty"`
	Data    json.RawMessage `json:"data"`
}

// goldenRequest is the part of a model request the transcripts keep: the
// messages in full, and the tools by name (their schemas belong to the
// tools' own tests).
type goldenRequest struct {
	Model    string             `json:"model"`
	Messages []messages.Message `json:"messages"`
	Tools    []string           `json:"tools,omitempty"`
}

func (tr *transcript) encode(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	line := func(l goldenLine) {
		out, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
		b.WriteByte('\n')
	}
	for _, ev := range tr.events {
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		line(goldenLine{Kind: "event", Type: ev.EventType(), Data: data})
	}
	for _, req := range tr.requests {
		gr := goldenRequest{Model: req.Model, Messages: req.Messages}
		for _, d := range req.Tools {
			gr.Tools = append(gr.Tools, d.Name)
		}
		data, err := json.Marshal(gr)
		if err != nil {
			t.Fatal(err)
		}
		line(goldenLine{Kind: "request", Data: data})
	}
	for _, s := range tr.sessions {
		for _, e := range tr.journals[s] {
			data, err := json.Marshal(e.Event)
			if err != nil {
				t.Fatal(err)
			}
			at := e.Envelope.At.UTC()
			line(goldenLine{Kind: "journal", Session: s, Seq: e.Envelope.Seq, Type: e.Envelope.Type, At: &at, Data: data})
		}
	}
	return b.Bytes()
}

// readJournal returns every entry of session's journal.
func readJournal(t *testing.T, j memory.Journal, session string) []memory.Entry {
	t.Helper()
	var out []memory.Entry
	for e, err := range j.Read(t.Context(), session, 1) {
		if err != nil {
			t.Fatalf("read journal %s: %v", session, err)
		}
		out = append(out, e)
	}
	return out
}

// checkGolden compares got with testdata/golden_<name>.jsonl, or writes
// it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden_"+name+".jsonl")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(splitLines(want), splitLines(got)); diff != "" {
		t.Errorf("transcript %s differs from %s (-want +got):\n%s", name, path, diff)
	}
}

func splitLines(b []byte) []string {
	var out []string
	for _, l := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
		out = append(out, string(l))
	}
	return out
}

// goldenRun is one scenario's runtime: deterministic seams, a recording
// model, and the journal it writes.
type goldenRun struct {
	rt   *actors.Runtime
	prov *recordingProvider
	j    memory.Journal
}

// newGoldenRun starts a runtime on journal j (a fresh in-memory one when
// nil) with the fixed clock, sequential turn ids, the script and the
// tools, after mod adjusts the config.
func newGoldenRun(t *testing.T, j memory.Journal, script scripted.Script, tools []toolsys.Tool, mod func(*actors.Config)) *goldenRun {
	t.Helper()
	if j == nil {
		j = goldenJournal(t)
	}
	model, err := scripted.New(script, scripted.Options{ChunkSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	prov := &recordingProvider{inner: model}
	reg := runAllRegistry(t)
	for _, tool := range tools {
		reg.MustRegister(tool)
	}
	cfg := actors.Config{Journal: j, Provider: prov, Tools: reg, Clock: fixedClock{}, IDs: seqIDs()}
	if mod != nil {
		mod(&cfg)
	}
	rt, err := actors.New(cfg)
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
	return &goldenRun{rt: rt, prov: prov, j: j}
}

// goldenJournal opens an in-memory journal on the fixed clock.
func goldenJournal(t *testing.T) memory.Journal {
	t.Helper()
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone, Clock: fixedClock{}.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = j.Close()
		_ = store.Close()
	})
	return j
}

// stream runs input as a turn of session id, calling onEvent (when not
// nil) with each event as it arrives, and returns the events.
func (g *goldenRun) stream(t *testing.T, id, input string, onEvent func(messages.Event), opts ...actors.SubmitOption) []messages.Event {
	t.Helper()
	sess, err := g.rt.Open(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var evs []messages.Event
	for ev, err := range sess.Stream(t.Context(), messages.UserText(input), opts...) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if onEvent != nil {
			onEvent(ev)
		}
	}
	return evs
}

// transcript collects the requests and the journals of sessions.
func (g *goldenRun) transcript(t *testing.T, evs []messages.Event, sessions ...string) []byte {
	t.Helper()
	tr := &transcript{events: evs, requests: g.prov.requests(), journals: map[string][]memory.Entry{}, sessions: sessions}
	for _, s := range sessions {
		tr.journals[s] = readJournal(t, g.j, s)
	}
	return tr.encode(t)
}

// settled waits until session id has journaled everything its turn's
// sub-agents owe it (Session.Usage waits for that).
func (g *goldenRun) settled(t *testing.T, id string) {
	t.Helper()
	sess, err := g.rt.Open(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Usage(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestGolden_TextTurn(t *testing.T) {
	g := newGoldenRun(t, nil, textScript("Hello there, how can I help?"), nil, func(c *actors.Config) {
		c.BasePrompt = "You are terse."
	})
	evs := g.stream(t, "s", "hi", nil)
	checkGolden(t, "text_turn", g.transcript(t, evs, "s"))
}

func TestGolden_ParallelTools(t *testing.T) {
	// second returns only once the session has recorded first's result,
	// so that the results reach the journal in a known order.
	firstDone := make(chan struct{})
	var once sync.Once
	second := &funcTool{name: "second", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, args json.RawMessage) (toolsys.Result, error) {
		select {
		case <-firstDone:
		case <-ctx.Done():
			return toolsys.Result{}, ctx.Err()
		}
		return toolsys.Result{Content: "second:" + string(args)}, nil
	}}
	script := toolScript("both done", scripted.ToolCall{Name: "first", Arguments: `{"n":1}`}, scripted.ToolCall{Name: "second", Arguments: `{"n":2}`})
	g := newGoldenRun(t, nil, script, []toolsys.Tool{echoTool("first"), second}, func(c *actors.Config) {
		c.Hooks.Register(actors.PostToolUse, actors.HookFunc(func(_ context.Context, hc *actors.HookContext) actors.HookResult {
			if hc.Call.Name == "first" {
				once.Do(func() { close(firstDone) })
			}
			return actors.HookResult{}
		}))
	})
	evs := g.stream(t, "s", "run both", nil)
	checkGolden(t, "parallel_tools", g.transcript(t, evs, "s"))
}

func TestGolden_ToolError(t *testing.T) {
	broken := &funcTool{name: "broken", perm: toolsys.PermReadOnly, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{}, errors.New("disk on fire")
	}}
	g := newGoldenRun(t, nil, toolScript("it failed", scripted.ToolCall{Name: "broken", Arguments: `{}`}), []toolsys.Tool{broken}, nil)
	evs := g.stream(t, "s", "try it", nil)
	checkGolden(t, "tool_error", g.transcript(t, evs, "s"))
}

func TestGolden_CancelledTurn(t *testing.T) {
	block := &funcTool{name: "block", perm: toolsys.PermReadOnly, fn: func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
		<-ctx.Done()
		return toolsys.Result{}, ctx.Err()
	}}
	g := newGoldenRun(t, nil, toolScript("never", scripted.ToolCall{Name: "block", Arguments: `{}`}), []toolsys.Tool{block}, nil)
	sess, err := g.rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	evs := g.stream(t, "s", "wait forever", func(ev messages.Event) {
		if _, ok := ev.(messages.ToolStarted); ok {
			if _, err := sess.Cancel(t.Context()); err != nil {
				t.Error(err)
			}
		}
	})
	checkGolden(t, "cancelled_turn", g.transcript(t, evs, "s"))
}

func TestGolden_SubAgent(t *testing.T) {
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Exact: "delegate"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			{Name: actors.SpawnAgentToolName, Arguments: `{"agent":"worker","task":"compute the answer"}`}}}},
		{Match: scripted.Match{Exact: "compute the answer"}, Reply: scripted.Reply{Text: "42"}},
		{Match: scripted.Match{Tool: actors.SpawnAgentToolName}, Reply: scripted.Reply{Text: "The worker says 42."}},
	}}
	g := newGoldenRun(t, nil, script, nil, func(c *actors.Config) {
		c.Agents = []actors.AgentProfile{
			{Name: "lead", Prompt: "You delegate."},
			{Name: "worker", Prompt: "You compute."},
		}
		c.SubAgents = actors.SubAgents{Enabled: true}
	})
	evs := g.stream(t, "s", "delegate", nil)
	g.settled(t, "s")
	child := "s:sub:call_1_1"
	checkGolden(t, "subagent", g.transcript(t, evs, "s", child))
}

func TestGolden_Handoff(t *testing.T) {
	script := toolScript("Billing here: refund issued.", scripted.ToolCall{Name: actors.TransferToolName, Arguments: `{"agent":"billing","reason":"a refund"}`})
	g := newGoldenRun(t, nil, script, nil, func(c *actors.Config) {
		c.Agents = []actors.AgentProfile{
			{Name: "triage", Prompt: "You route requests.", Tools: []string{actors.TransferToolName}},
			{Name: "billing", Description: "refunds and invoices", Prompt: "You handle billing."},
		}
		c.SubAgents = actors.SubAgents{Handoff: true}
	})
	evs := g.stream(t, "s", "I want my money back", nil)
	checkGolden(t, "handoff", g.transcript(t, evs, "s"))
}

func TestGolden_Approval(t *testing.T) {
	var runs atomic.Int32
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	g := newGoldenRun(t, nil, toolScript("written", scripted.ToolCall{ID: "c1", Name: "write", Arguments: "{}"}), nil, func(c *actors.Config) {
		reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
		reg.MustRegister(writeTool(&runs))
		c.Tools = reg
		c.Approver = actors.ManualApprover()
	})
	evs := g.stream(t, "s", "write it", func(ev messages.Event) {
		if p, ok := ev.(messages.ApprovalPending); ok {
			if err := g.rt.Approve(t.Context(), "s", p.CallID, true, ""); err != nil {
				t.Error(err)
			}
		}
	})
	if runs.Load() != 1 {
		t.Errorf("the tool ran %d times, want 1", runs.Load())
	}
	checkGolden(t, "approval", g.transcript(t, evs, "s"))
}

// TestGolden_ResumeAfterCrash starts a runtime on a journal that a
// process crash left mid-turn: two calls started, neither with a result.
// The read-only call runs again, the write call is reported as
// interrupted, and the turn completes. The transcript keeps the journal,
// the requests and how the turn ended (a resubmission of its id reports
// that whether it attaches to the running turn or reads the journal).
func TestGolden_ResumeAfterCrash(t *testing.T) {
	j := goldenJournal(t)
	ctx := t.Context()
	activation, tail, err := j.Activate(ctx, "s", "local")
	if err != nil {
		t.Fatal(err)
	}
	calls := []messages.ToolCall{
		{ID: "call_1_1", Name: "lookup", Arguments: `{"q":"a"}`},
		{ID: "call_1_2", Name: "charge", Arguments: `{"cents":100}`},
	}
	if _, err := j.Append(ctx, "s", activation, tail,
		messages.UserMessage{TurnID: "t1", Turn: 0, Message: messages.UserText("look up and charge")},
		messages.AssistantMessage{Turn: 0, Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: calls},
			FinishReason: messages.FinishToolCalls, Model: scripted.DefaultModel, Usage: messages.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}},
		messages.ToolCallStarted{Turn: 0, CallID: calls[0].ID, Name: calls[0].Name, Arguments: calls[0].Arguments},
		messages.ToolCallStarted{Turn: 0, CallID: calls[1].ID, Name: calls[1].Name, Arguments: calls[1].Arguments},
	); err != nil {
		t.Fatal(err)
	}
	var charges atomic.Int32
	charge := &funcTool{name: "charge", perm: toolsys.PermWrite, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		charges.Add(1)
		return toolsys.Result{Content: "charged"}, nil
	}}
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "Looked up; the charge was interrupted."}},
	}}
	g := newGoldenRun(t, j, script, []toolsys.Tool{echoTool("lookup"), charge}, nil)
	sess, err := g.rt.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	var last messages.Event
	for ev, err := range sess.Stream(ctx, messages.UserText("look up and charge"), actors.WithTurnID("t1")) {
		if err != nil {
			t.Fatal(err)
		}
		last = ev
	}
	if charges.Load() != 0 {
		t.Errorf("the interrupted write tool ran %d times after the crash, want 0", charges.Load())
	}
	checkGolden(t, "resume_after_crash", g.transcript(t, []messages.Event{last}, "s"))
}

// TestGolden_ResumeAfterFault crashes the session's actor while both calls
// of a reply run. The restarted actor resumes the turn from the journal:
// the read-only call runs again, the write call is reported as
// interrupted, and the stream that submitted the turn follows it to its
// end.
func TestGolden_ResumeAfterFault(t *testing.T) {
	var lookups, charges atomic.Int32
	started := make(chan struct{}, 2)
	blockOnce := func(n *atomic.Int32, content string) func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return func(ctx context.Context, _ json.RawMessage) (toolsys.Result, error) {
			if n.Add(1) == 1 {
				started <- struct{}{}
				<-ctx.Done()
				return toolsys.Result{}, ctx.Err()
			}
			return toolsys.Result{Content: content}, nil
		}
	}
	lookup := &funcTool{name: "lookup", perm: toolsys.PermReadOnly, fn: blockOnce(&lookups, "found")}
	charge := &funcTool{name: "charge", perm: toolsys.PermWrite, fn: blockOnce(&charges, "charged")}
	script := toolScript("Looked up; the charge was interrupted.",
		scripted.ToolCall{Name: "lookup", Arguments: `{"q":"a"}`}, scripted.ToolCall{Name: "charge", Arguments: `{"cents":100}`})
	g := newGoldenRun(t, nil, script, []toolsys.Tool{lookup, charge}, nil)
	sess, err := g.rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-started
		<-started
		if err := sess.Fault(errors.New("injected fault")); err != nil {
			t.Error(err)
		}
	}()
	evs := g.stream(t, "s", "look up and charge", nil)
	if got := charges.Load(); got != 1 {
		t.Errorf("the write tool ran %d times, want 1 (not again after the fault)", got)
	}
	if got := lookups.Load(); got != 2 {
		t.Errorf("the read-only tool ran %d times, want 2", got)
	}
	checkGolden(t, "resume_after_fault", g.transcript(t, evs, "s"))
}
