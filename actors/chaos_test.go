package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// The reliability tests (chaos, kill loop) run a bounded short form by
// default. AGCORE_LONG=1 in the environment selects their long form, the
// full-size workloads:
//
//	AGCORE_LONG=1 go test -race -run 'TestChaos|TestKillLoop' -timeout 30m ./actors
const longEnv = "AGCORE_LONG"

// longForm reports whether the long form of the reliability tests was asked
// for.
func longForm() bool { return os.Getenv(longEnv) == "1" }

// journalAudit is what one session's journal says of its tool calls, for
// the tests that compare it with the side effects of the tools; the
// invariants themselves are checked by chaos.Check.
type journalAudit struct {
	state *memory.State
	// started counts ToolCallStarted per call key.
	started map[string]int
}

func callKey(turn int, id string) string { return fmt.Sprintf("%d/%s", turn, id) }

// auditJournal loads session's state and counts its tool call starts.
func auditJournal(ctx context.Context, j memory.Journal, session string) (*journalAudit, error) {
	st, err := j.Load(ctx, session)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", session, err)
	}
	a := &journalAudit{state: st, started: map[string]int{}}
	for e, err := range j.Read(ctx, session, 1) {
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", session, err)
		}
		if ev, ok := e.Event.(messages.ToolCallStarted); ok {
			a.started[callKey(ev.Turn, ev.CallID)]++
		}
	}
	return a, nil
}

// openJournal opens the journal of the data directory dir, for reading
// after the runtime that wrote it has gone. close releases the directory.
func openJournal(t *testing.T, dir string) (j memory.Journal, close func()) {
	t.Helper()
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	bj, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		_ = store.Close()
		t.Fatal(err)
	}
	return bj, func() {
		if err := bj.Close(); err != nil {
			t.Error(err)
		}
		if err := store.Close(); err != nil {
			t.Error(err)
		}
	}
}

// chaosOutcomes tallies how the chaos turns ended.
type chaosOutcomes struct {
	mu        sync.Mutex
	outcomes  map[messages.TurnOutcome]int
	reasons   map[string]int // failed turns by error kind
	toolOK    int
	panicked  int
	timedOut  int
	toolOther int
	acked     map[string][]string // session -> acknowledged user texts, in order
}

func (c *chaosOutcomes) record(session, text string, res *actors.TurnResult, err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var te *actors.TurnError
	switch {
	case err == nil:
	case errors.As(err, &te):
		if te.Reason == "" || res == nil || res.Reason == "" {
			return fmt.Errorf("turn %q failed without a reason: %v", text, err)
		}
		kind := "other"
		for _, k := range []providers.Kind{providers.KindRateLimited, providers.KindServer, providers.KindTimeout} {
			if strings.Contains(te.Reason, k.String()) {
				kind = k.String()
			}
		}
		c.reasons[kind]++
	default:
		return fmt.Errorf("turn %q ended with an unreported error: %w", text, err)
	}
	c.acked[session] = append(c.acked[session], text)
	c.outcomes[res.Outcome]++
	for _, tc := range res.ToolCalls {
		switch {
		case !tc.IsError:
			c.toolOK++
		case strings.Contains(tc.Content, "panicked"):
			c.panicked++
		case strings.Contains(tc.Content, "timed out"):
			c.timedOut++
		default:
			c.toolOther++
		}
	}
	return nil
}

// TestChaos runs many concurrent sessions against a provider that fails 20%
// of its calls (rate limited, server error, timeout) and tools that panic
// on 10% of calls and hang on 5%. Every turn must complete or fail with a
// reason, every fault must come back as a tool error result, and after a
// shutdown the journal must hold every acknowledged message, with each
// tool call answered exactly once.
func TestChaos(t *testing.T) {
	sessions, turns := 40, 3
	if longForm() {
		sessions, turns = 200, 5
	}
	const seed = 20240611
	dir := t.TempDir()

	script := toolScript("done",
		scripted.ToolCall{Name: "lookup", Arguments: `{}`},
		scripted.ToolCall{Name: "note", Arguments: `{}`})
	script.Stateless = true
	prov, err := chaos.NewProvider(scripted.MustNew(script, scripted.Options{}), chaos.ProviderOptions{FailRate: 0.2, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	reg := runAllRegistry(t)
	reg.MustRegister(echoTool("lookup"))
	reg.MustRegister(&funcTool{name: "note", perm: toolsys.PermWrite, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{Content: "noted"}, nil
	}})
	tools, err := chaos.NewToolSet(reg, chaos.ToolOptions{PanicRate: 0.1, HangRate: 0.05, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := actors.New(actors.Config{
		DataDir: dir, Durability: memory.DurabilityBatch, Provider: prov, Tools: tools,
		Limits: actors.Limits{ToolTimeout: 200 * time.Millisecond},
		// One retry, without waiting: some model calls still fail for good.
		Retry:       providers.RetryPolicy{MaxAttempts: 2, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }},
		IdleTimeout: -1, Compaction: actors.Compaction{Disabled: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	out := &chaosOutcomes{outcomes: map[messages.TurnOutcome]int{}, reasons: map[string]int{}, acked: map[string][]string{}}
	ids := make(chan string)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for id := range ids {
				sess, err := rt.Open(ctx, id)
				if err != nil {
					t.Errorf("open %s: %v", id, err)
					continue
				}
				for k := range turns {
					text := fmt.Sprintf("%s turn %d", id, k)
					res, err := sess.Submit(ctx, messages.UserText(text), actors.WithTurnID(fmt.Sprintf("%s-t%d", id, k)))
					if err := out.record(id, text, res, err); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	for i := range sessions {
		ids <- fmt.Sprintf("chaos-%03d", i)
	}
	close(ids)
	wg.Wait()

	shutdownCtx, cancelShutdown := context.WithTimeout(ctx, 30*time.Second)
	defer cancelShutdown()
	if err := rt.Shutdown(shutdownCtx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	ps, ts := prov.Stats(), tools.Stats()
	t.Logf("%d sessions x %d turns: outcomes %v, failed turns by kind %v", sessions, turns, out.outcomes, out.reasons)
	t.Logf("provider: %d calls, %d failed %v; tools: %d calls, %d panics, %d hangs",
		ps.Calls, ps.Failed(), ps.Failures, ts.Calls, ts.Panics, ts.Hangs)
	t.Logf("tool results: %d ok, %d panicked, %d timed out, %d other errors", out.toolOK, out.panicked, out.timedOut, out.toolOther)

	if got := out.outcomes[messages.OutcomeCompleted] + out.outcomes[messages.OutcomeFailed]; got != sessions*turns {
		t.Errorf("%d turns completed or failed, want %d (outcomes %v)", got, sessions*turns, out.outcomes)
	}
	if ps.Failed() == 0 || ts.Panics == 0 || ts.Hangs == 0 {
		t.Errorf("no chaos happened: provider %+v, tools %+v", ps, ts)
	}
	// Every panic and hang must come back as an error result. A call that
	// did not hang may still miss its deadline on a loaded machine, so
	// timeouts are only bounded below.
	if int64(out.panicked) != ts.Panics || int64(out.timedOut) < ts.Hangs || out.toolOther != 0 {
		t.Errorf("tool faults reported: %d panicked, %d timed out, %d other; injected: %d panics, %d hangs",
			out.panicked, out.timedOut, out.toolOther, ts.Panics, ts.Hangs)
	}

	var acks []chaos.Ack
	for i := range sessions {
		id := fmt.Sprintf("chaos-%03d", i)
		for _, text := range out.acked[id] {
			acks = append(acks, chaos.Ack{Session: id, Text: text})
		}
	}
	rep, err := chaos.CheckDir(ctx, dir, chaos.CheckOptions{Acknowledged: acks, Rerunnable: chaos.RerunnableIn(reg), Settled: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rep.Violations {
		t.Error(v)
	}
	if rep.Sessions != sessions || rep.Acknowledged != sessions*turns {
		t.Errorf("checked %d sessions and %d acknowledgements, want %d and %d", rep.Sessions, rep.Acknowledged, sessions, sessions*turns)
	}
	j, closeJournal := openJournal(t, dir)
	defer closeJournal()
	checked := 0
	for i := range sessions {
		id := fmt.Sprintf("chaos-%03d", i)
		a, err := auditJournal(ctx, j, id)
		if err != nil {
			t.Errorf("journal of %s: %v", id, err)
			continue
		}
		if a.state.Turn != turns {
			t.Errorf("%s: next turn %d, want %d", id, a.state.Turn, turns)
		}
		checked++
	}
	t.Logf("journal replayed for %d sessions: every acknowledged message present, every tool call answered once", checked)
}
