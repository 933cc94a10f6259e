package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// chaosEvent is one thing a workload reports as it runs: in a worker
// process, one JSON line on standard output.
type chaosEvent struct {
	// Type is "ready" (the runtime is open and every session resumed),
	// "ack" (a user message was journaled and its turn started), "end" (a
	// turn ended), "refused" (a submission failed before its turn
	// started), "fault" (a fault was injected), "problem" (the runtime
	// went wrong beyond its journal: Text says how) or "done" (every turn
	// ran and the runtime shut down).
	Type    string          `json:"t"`
	Session string          `json:"s,omitempty"`
	TurnID  string          `json:"turn_id,omitempty"`
	Text    string          `json:"text,omitempty"`
	Outcome string          `json:"outcome,omitempty"`
	Fault   chaos.FaultKind `json:"fault,omitempty"`
	// Rerunnable names, on "ready", the tools whose calls may run again
	// after an interruption, as the tools declare it before any broken
	// wrapper (--broken-rerun) lies about it.
	Rerunnable []string `json:"rerunnable,omitempty"`
}

// sink receives a workload's events. It is safe for concurrent use.
type sink func(chaosEvent)

// The built-in workload's tools.
const (
	chaosLookup = "lookup"
	chaosCharge = "charge"
)

// workload is a runtime configuration under faults, ready to start.
type workload struct {
	cfg actors.Config
	// tools are the tools before the faults, to read their declarations.
	tools *toolsys.Registry
	// rerunnable names the tools that may run again, before any broken
	// wrapper.
	rerunnable []string
	// prompt is the user message of turn k of a session.
	prompt func(session string, k int) string
	// close releases what the workload opened, after the runtime's
	// shutdown.
	close func() error
}

// chaosSeed is the seed of worker n's faults: each worker draws its own,
// reproducibly.
func chaosSeed(seed uint64, worker int) uint64 { return seed + uint64(worker)*0x9e3779b97f4a7c15 }

// buildWorkload builds the workload of o on the data directory dataDir:
// the built-in one, or the configuration's (--config), with every fault
// of o. Every injected fault is reported to out. worker numbers the
// process (0 in-process) and varies the seed.
func buildWorkload(ctx context.Context, a *app, o *chaosOptions, dataDir, ledger string, worker int, out sink) (*workload, error) {
	seed := chaosSeed(o.seed, worker)
	observe := func(f chaos.Fault) { out(chaosEvent{Type: "fault", Fault: f.Kind}) }
	var (
		w   *workload
		err error
	)
	if a.configPath != "" {
		w, err = configWorkload(ctx, a, o, dataDir)
	} else {
		w, err = builtinWorkload(a, o, dataDir, ledger)
	}
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = w.close()
		}
	}()
	for _, t := range w.tools.List() {
		if chaos.RerunnableIn(w.tools)(t.Name()) {
			w.rerunnable = append(w.rerunnable, t.Name())
		}
	}
	if o.brokenRerun {
		for _, t := range w.tools.List() {
			if slices.Contains(w.rerunnable, t.Name()) {
				continue
			}
			w.tools.Unregister(t.Name())
			if err := w.tools.Register(chaos.FalselyIdempotent(t)); err != nil {
				return nil, err
			}
		}
	}
	ts, err := chaos.NewToolSet(w.tools, chaos.ToolOptions{PanicRate: o.panicRate, HangRate: o.hangRate,
		ErrorRate: o.toolErrorRate, SlowRate: o.slowToolRate, Seed: seed, OnFault: observe})
	if err != nil {
		return nil, &usageError{err}
	}
	w.cfg.Tools = ts
	popts := chaos.ProviderOptions{FailRate: o.failRate, MalformedRate: o.malformedRate, TruncateRate: o.truncateRate,
		SlowRate: o.slowTokenRate, Seed: seed + 1, OnFault: observe}
	if w.cfg.Provider != nil {
		if w.cfg.Provider, err = chaos.NewProvider(w.cfg.Provider, popts); err != nil {
			return nil, &usageError{err}
		}
	}
	if reg := w.cfg.Providers; reg != nil {
		for i, name := range reg.Names() {
			p, _ := reg.Get(name)
			popts.Seed = seed + 1 + uint64(i)
			cp, err := chaos.NewProvider(p, popts)
			if err != nil {
				return nil, &usageError{err}
			}
			if err := reg.Replace(name, cp); err != nil {
				return nil, err
			}
		}
	}
	if o.toolTimeout > 0 {
		w.cfg.Limits.ToolTimeout = o.toolTimeout
	}
	w.cfg.IdleTimeout = -1
	if o.appendFailRate > 0 {
		if err := w.faultyJournal(dataDir, o, seed+2, observe); err != nil {
			return nil, err
		}
	}
	ok = true
	return w, nil
}

// faultyJournal replaces the workload's data directory by its journal,
// wrapped to refuse a fraction of the writes.
func (w *workload) faultyJournal(dataDir string, o *chaosOptions, seed uint64, observe chaos.Observer) error {
	store := w.cfg.Store
	if store == nil {
		var err error
		if store, err = memory.Open(memory.Options{Dir: dataDir}); err != nil {
			return err
		}
		prev := w.close
		w.close = func() error { return errors.Join(prev(), store.Close()) }
	}
	bj, err := memory.NewJournal(store, memory.JournalOptions{Durability: w.cfg.Durability})
	if err != nil {
		return err
	}
	prev := w.close
	w.close = func() error { return errors.Join(bj.Close(), prev()) }
	j, err := chaos.NewJournal(bj, chaos.JournalOptions{AppendFailRate: o.appendFailRate, Seed: seed, OnFault: observe})
	if err != nil {
		return &usageError{err}
	}
	w.cfg.DataDir, w.cfg.Store, w.cfg.Journal = "", nil, j
	return nil
}

// builtinWorkload is the built-in agent: each turn, a scripted model
// calls a read-only lookup and a non-idempotent charge in parallel, then
// answers. charge appends a line to the ledger file before it answers, a
// side effect the report checks was never made twice for one call.
func builtinWorkload(a *app, o *chaosOptions, dataDir, ledger string) (*workload, error) {
	script := scripted.Script{Stateless: true, Rules: []scripted.Rule{
		{Name: "calls", Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			Text: "Looking it up and charging it.",
			ToolCalls: []scripted.ToolCall{
				{Name: chaosLookup, Arguments: `{"item":"book"}`},
				{Name: chaosCharge, Arguments: `{"cents":1200}`},
			}}},
		{Name: "final", Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "Done: the book is charged."}},
	}}
	model, err := scripted.New(script, scripted.Options{Logger: component(a.log, "scripted")})
	if err != nil {
		return nil, err
	}
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeBypass})
	if err != nil {
		return nil, err
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms, Logger: component(a.log, "tools"), Redactor: a.redactor})
	reg.MustRegister(toolsys.Bridge[lookupParams](lookupTool{}))
	reg.MustRegister(toolsys.Bridge[chargeParams](chargeTool{ledger: ledger}))
	return &workload{
		cfg: actors.Config{
			DataDir: dataDir, Durability: memory.DurabilityBatch, Provider: model, Model: "scripted",
			BasePrompt: "You look items up and charge them.",
			Retry:      providers.RetryPolicy{MaxAttempts: 3, Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond},
			Compaction: actors.Compaction{Disabled: true}, Logger: chaosLogger(a),
		},
		tools:  reg,
		prompt: func(s string, k int) string { return fmt.Sprintf("%s turn %d: look the book up and charge it", s, k) },
		close:  func() error { return nil },
	}, nil
}

// configWorkload is the workload of the configuration file: its
// providers, tools and agent profiles, on dataDir.
func configWorkload(ctx context.Context, a *app, o *chaosOptions, dataDir string) (*workload, error) {
	cfg, err := a.loadConfig(config.Overrides{Model: o.model, DataDir: dataDir})
	if err != nil {
		return nil, err
	}
	cfg.DataDir = dataDir
	built, err := config.Build(ctx, cfg, config.BuildOptions{Getenv: a.getenv, Logger: chaosLogger(a), Redactor: a.redactor})
	if err != nil {
		return nil, err
	}
	prompt := o.prompt
	return &workload{
		cfg:    built.Runtime,
		tools:  built.Tools,
		prompt: func(s string, k int) string { return fmt.Sprintf("%s (session %s, turn %d)", prompt, s, k) },
		close:  built.Close,
	}, nil
}

type lookupParams struct {
	Item string `json:"item" jsonschema:"the item to look up"`
}

// lookupTool is the built-in workload's read-only tool.
type lookupTool struct{}

func (lookupTool) Name() string                   { return chaosLookup }
func (lookupTool) Description() string            { return "Looks an item up in the catalogue." }
func (lookupTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (lookupTool) SecretParams() []string         { return nil }
func (lookupTool) Execute(_ context.Context, p lookupParams, _ *toolsys.Context) (toolsys.Result, error) {
	return toolsys.Result{Content: p.Item + ": 12.00"}, nil
}

type chargeParams struct {
	Cents int `json:"cents" jsonschema:"the amount to charge, in cents"`
}

// chargeTool is the built-in workload's non-idempotent tool: it appends
// "<session> <turn> <call id>" to the ledger file and syncs it before it
// answers.
type chargeTool struct{ ledger string }

func (chargeTool) Name() string                   { return chaosCharge }
func (chargeTool) Description() string            { return "Charges the customer's card." }
func (chargeTool) Permission() toolsys.Permission { return toolsys.PermWrite }
func (chargeTool) SecretParams() []string         { return nil }
func (chargeTool) Idempotent() bool               { return false }

func (c chargeTool) Execute(_ context.Context, p chargeParams, tc *toolsys.Context) (toolsys.Result, error) {
	f, err := os.OpenFile(c.ledger, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return toolsys.Result{}, fmt.Errorf("charge: ledger: %w", err)
	}
	_, err = fmt.Fprintf(f, "%s %d %s\n", tc.SessionID, tc.Turn, tc.CallID)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return toolsys.Result{}, fmt.Errorf("charge: ledger: %w", err)
	}
	return toolsys.Result{Content: fmt.Sprintf("charged %d.%02d", p.Cents/100, p.Cents%100)}, nil
}

// chaosLogger is the logger of a runtime under chaos. The runtime logs
// every fault it recovers from, injected ones included, so at the default
// level (info) it is silent: the report says what happened. --log-level
// debug or warn shows its lines.
func chaosLogger(a *app) zerolog.Logger {
	l := component(a.log, "runtime")
	if a.logLevel == "" || a.logLevel == "info" {
		l = l.Level(zerolog.Disabled)
	}
	return l
}

// chaosSessionID names session i of a run.
func chaosSessionID(i int) string { return fmt.Sprintf("chaos-%03d", i) }

// chaosTurnID is the client turn id of turn k of session s.
func chaosTurnID(s string, k int) string { return fmt.Sprintf("%s-t%d", s, k) }

// maxRefusals is how many times a turn whose stream stopped before its
// end (a journal write refused) is submitted again before the session
// moves on.
const maxRefusals = 10

// runWorkload opens every session of o on rt, reports "ready", and runs
// each session's remaining turns (from the turn its journal is at to
// o.turns), all sessions at once, reporting to out. It returns when every
// session is done or ctx is.
func runWorkload(ctx context.Context, rt *actors.Runtime, w *workload, o *chaosOptions, out sink) error {
	handles := make([]*actors.Session, o.sessions)
	next := make([]int, o.sessions)
	for i := range handles {
		h, st, err := openChaosSession(ctx, rt, chaosSessionID(i), out)
		if err != nil {
			return err
		}
		handles[i], next[i] = h, st.NextTurn
	}
	out(chaosEvent{Type: "ready", Rerunnable: w.rerunnable})
	var wg sync.WaitGroup
	for i, h := range handles {
		wg.Go(func() {
			id := chaosSessionID(i)
			for k := next[i]; k < o.turns && ctx.Err() == nil; k++ {
				runChaosTurn(ctx, h, id, chaosTurnID(id, k), w.prompt(id, k), out)
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// openChaosSession opens session id and reads its status, trying again
// when the journal refuses its activation (an injected full disk).
func openChaosSession(ctx context.Context, rt *actors.Runtime, id string, out sink) (*actors.Session, actors.Status, error) {
	var err error
	for range maxRefusals {
		var h *actors.Session
		if h, err = rt.Open(ctx, id); err == nil {
			var st actors.Status
			if st, err = h.Status(ctx); err == nil {
				return h, st, nil
			}
		}
		if !errors.Is(err, memory.ErrNoSpace) {
			break
		}
		out(chaosEvent{Type: "refused", Session: id, Text: err.Error()})
	}
	return nil, actors.Status{}, fmt.Errorf("open session %s: %w", id, err)
}

// runChaosTurn runs one turn until it ends, submitting it again (with
// the same client turn id, so that it never runs twice) when the stream
// stops before the turn's end: a journal write refused before the turn
// started, or one that stopped the session in the middle of it (the next
// submission activates the session again, which resumes the turn).
func runChaosTurn(ctx context.Context, h *actors.Session, id, turnID, text string, out sink) {
	acked := false
	for range maxRefusals {
		ended := false
		var failure error
		for ev, err := range h.Stream(ctx, messages.UserText(text), actors.WithTurnID(turnID)) {
			if err != nil {
				failure = err
				break
			}
			switch e := ev.(type) {
			case messages.TurnStarted:
				if !acked {
					acked = true
					out(chaosEvent{Type: "ack", Session: id, TurnID: turnID, Text: text})
				}
			case messages.TurnEnded:
				ended = true
				out(chaosEvent{Type: "end", Session: id, TurnID: turnID, Outcome: string(e.Outcome)})
			}
		}
		if ended || ctx.Err() != nil {
			return
		}
		out(chaosEvent{Type: "refused", Session: id, TurnID: turnID, Text: errText(failure)})
	}
}

func errText(err error) string {
	if err == nil {
		return "the turn did not start"
	}
	return err.Error()
}

// encodeEvents returns a sink writing each event as a JSON line to w, one
// writer at a time.
func encodeEvents(w interface{ Write([]byte) (int, error) }) sink {
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	return func(ev chaosEvent) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(ev) // the parent reads until the worker exits
	}
}
