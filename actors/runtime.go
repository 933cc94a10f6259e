package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"text/template"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/internal/logging"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/supervisor"
)

// Runtime is an actor system running agent sessions over one journal. It is
// safe for concurrent use. Create it with New or NewInMemory and end it with
// Shutdown.
type Runtime struct {
	cfg           Config
	logger        zerolog.Logger
	redactor      *redact.Redactor // masks events, journal entries and logs
	clock         supervisor.Clock
	ids           IDs
	rnd           supervisor.Rand
	limits        Limits
	hooks         Hooks
	agents        map[string]*agent
	agentOrder    []string
	defaultAgent  string
	base          *template.Template
	providers     *providers.Registry
	tracker       *providers.Tracker
	journal       memory.Journal
	sessionMemory SessionMemory
	modelDecider  supervisor.Decider

	ownStore   *memory.Store
	ownJournal *memory.BadgerJournal

	system          *actor.ActorSystem
	sessionStrategy actor.SupervisorStrategy
	compactor       *actor.PID
	retriever       *actor.PID
	swarm           *swarm
	mcp             *mcpSet // nil without Config.MCPServers

	// ctx is cancelled when the runtime has shut down; journal calls and
	// turns derive from it.
	ctx    context.Context
	cancel context.CancelFunc

	// instances numbers session actor instances (see idleTick).
	instances atomic.Uint64

	mu       sync.Mutex
	entries  map[string]*entry
	deleting map[string]struct{} // sessions Delete is removing
	closed   bool
}

// entry is the part of a session that outlives its actor: the event hub,
// the submissions not yet journaled, and why the session stopped.
type entry struct {
	id  string
	hub *hub
	pid *actor.PID
	sub *subSpec // set for a sub-agent session

	mu      sync.Mutex
	pending []*submitCmd
	gen     uint64 // generation of the actor's child work; owned by the actor
	busy    bool
	idle    chan struct{} // closed while no turn runs
	stopErr error
	gone    chan struct{}            // closed when the actor has stopped
	waits   map[string]*approvalWait // pending approvals by call id; written by the actor
	// live holds the sub-agents whose result the session waits for, by
	// child session id, and settles the settleCmd replies waiting for them.
	// Both are owned by the actor and outlive its restarts, as the
	// sub-agents' reports do.
	live    map[string]*liveSub
	settles []chan Status
}

func newEntry(id string) *entry {
	idle := make(chan struct{})
	close(idle)
	return &entry{id: id, hub: newHub(), idle: idle, gone: make(chan struct{}), live: make(map[string]*liveSub)}
}

// setBusy records whether a turn runs (for Shutdown).
func (e *entry) setBusy(busy bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if busy == e.busy {
		return
	}
	e.busy = busy
	if busy {
		e.idle = make(chan struct{})
	} else {
		close(e.idle)
	}
}

func (e *entry) idleCh() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.idle
}

// takePending removes and returns the submissions not yet handled.
func (e *entry) takePending() []*submitCmd {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.pending
	e.pending = nil
	return p
}

// removePending forgets cmd once the session has handled it.
func (e *entry) removePending(cmd *submitCmd) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if i := slices.Index(e.pending, cmd); i >= 0 {
		// slices.Delete clears the vacated slot, so that the backing
		// array does not keep the handled submission (and its
		// subscriber's buffer) alive.
		e.pending = slices.Delete(e.pending, i, i+1)
	}
}

func (e *entry) stopped() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopErr
}

// New starts a runtime. It fails with an error wrapping ErrConfig when the
// configuration is incomplete or invalid, naming the field.
func New(cfg Config) (*Runtime, error) {
	rt := &Runtime{cfg: cfg, logger: cfg.Logger, clock: cfg.Clock, ids: cfg.IDs, rnd: cfg.Rand, entries: make(map[string]*entry)}
	if rt.clock == nil {
		rt.clock = supervisor.SystemClock()
	}
	if rt.ids == nil {
		rt.ids = randomIDs{}
	}
	if rt.rnd == nil {
		rt.rnd = supervisor.NewRand(1)
	}
	if rt.cfg.EventBuffer <= 0 {
		rt.cfg.EventBuffer = 256
	}
	rt.redactor = rt.cfg.Redactor
	if r, ok := rt.cfg.Tools.(interface{ Redactor() *redact.Redactor }); ok && rt.redactor == nil {
		rt.redactor = r.Redactor()
	}
	if rt.redactor == nil {
		rt.redactor = redact.New()
	}
	rt.logger = logging.Redacted(rt.logger, rt.redactor)
	if rt.cfg.IdleTimeout == 0 {
		rt.cfg.IdleTimeout = 10 * time.Minute
	}
	if rt.cfg.Node == "" {
		rt.cfg.Node = "local"
	}
	rt.cfg.PromptVars = maps.Clone(cfg.PromptVars)
	rt.hooks = cfg.Hooks.clone()
	rt.limits = cfg.Limits.withDefaults()
	rt.tracker = providers.NewTracker(cfg.Prices)
	rt.modelDecider = supervisor.RetryDecider(providers.IsRetryable)

	if err := rt.configureProviders(); err != nil {
		return nil, err
	}
	if err := rt.configureMCP(); err != nil {
		return nil, err
	}
	var err error
	if rt.base, err = compileTemplate("base", cfg.BasePrompt); err != nil {
		return nil, configErr("BasePrompt", "%v", err)
	}
	if rt.agents, rt.agentOrder, err = compileAgents(cfg.Agents, rt.limits); err != nil {
		return nil, err
	}
	rt.defaultAgent = cfg.DefaultAgent
	if rt.defaultAgent == "" {
		rt.defaultAgent = rt.agentOrder[0]
	} else if rt.agents[rt.defaultAgent] == nil {
		return nil, configErr("DefaultAgent", "no agent named %q", rt.defaultAgent)
	}
	for name, a := range rt.agents {
		if _, _, err := rt.resolveModel(a); err != nil {
			return nil, configErr("Agents", "agent %q: %v", name, err)
		}
	}
	if err := rt.configureSwarm(); err != nil {
		return nil, err
	}
	if err := rt.openJournal(); err != nil {
		return nil, err
	}
	rt.ctx, rt.cancel = context.WithCancel(context.Background())
	rt.startActors()
	rt.startMCP()
	return rt, nil
}

// Redactor returns the redactor that masks what the runtime lets out
// (Config.Redactor, or the one it chose); give it to whatever else writes
// the runtime's data out, so that it masks the same credentials.
func (rt *Runtime) Redactor() *redact.Redactor { return rt.redactor }

// NewInMemory starts a runtime on an in-memory store (no fsync), for tests
// and examples. cfg's DataDir, Store and Journal must be empty.
func NewInMemory(cfg Config) (*Runtime, error) {
	if cfg.DataDir != "" || cfg.Store != nil || cfg.Journal != nil {
		return nil, configErr("DataDir", "NewInMemory takes no DataDir, Store or Journal")
	}
	store, err := memory.Open(memory.Options{InMemory: true, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("actors: in-memory store: %w", err)
	}
	cfg.Store = store
	cfg.Durability = memory.DurabilityNone
	rt, err := New(cfg)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	rt.ownStore = store
	return rt, nil
}

func (rt *Runtime) configureProviders() error {
	switch {
	case rt.cfg.Providers != nil:
		rt.providers = rt.cfg.Providers
	case rt.cfg.Provider != nil:
		rt.providers = &providers.Registry{}
		if err := rt.providers.Register("default", rt.cfg.Provider); err != nil {
			return configErr("Provider", "%v", err)
		}
		if err := rt.providers.SetDefault("default"); err != nil {
			return configErr("Provider", "%v", err)
		}
	default:
		return configErr("Providers", "set Providers or Provider")
	}
	return nil
}

func (rt *Runtime) openJournal() error {
	n := 0
	for _, set := range []bool{rt.cfg.DataDir != "", rt.cfg.Store != nil, rt.cfg.Journal != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return configErr("DataDir", "set exactly one of DataDir, Store and Journal")
	}
	if rt.cfg.Journal != nil {
		rt.journal, rt.sessionMemory = rt.cfg.Journal, rt.cfg.SessionMemory
		return nil
	}
	store := rt.cfg.Store
	if store == nil {
		var err error
		if store, err = memory.Open(memory.Options{Dir: rt.cfg.DataDir, Logger: rt.logger}); err != nil {
			return fmt.Errorf("actors: %w", err)
		}
		rt.ownStore = store
	}
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: rt.cfg.Durability, Clock: rt.clock.Now, Logger: rt.logger, Redactor: rt.redactor})
	if err != nil {
		if rt.ownStore != nil {
			_ = rt.ownStore.Close()
		}
		return configErr("Durability", "%v", err)
	}
	rt.journal, rt.ownJournal = j, j
	rt.sessionMemory = rt.cfg.SessionMemory
	if rt.sessionMemory == nil {
		rt.sessionMemory = memory.NewSessionMemory(store, memory.SessionMemoryOptions{})
	}
	return nil
}

func (rt *Runtime) startActors() {
	slogger := slog.New(logging.SlogHandler(rt.logger.With().Str("component", "protoactor").Logger()))
	rt.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slogger }))
	strategy := supervisor.NewSessionStrategy(supervisor.SessionOptions{
		// A fenced session must stop; so must one whose journal is corrupt
		// (replaying it again would fail again, and running on would act on
		// altered or missing facts) or cannot be written for want of disk
		// space (a restart would fail the same way). Their callers get the
		// error; the next call activates the session afresh.
		Decider: supervisor.SessionDecider(memory.ErrFenced, memory.ErrCorrupt, syscall.ENOSPC),
		Budget:  supervisor.NewBudget(supervisor.BudgetOptions{MaxFailures: rt.cfg.RestartBudget.MaxFailures, Window: rt.cfg.RestartBudget.Window, Clock: rt.clock}),
		Logger:  rt.logger,
		OnStop:  rt.onSessionStop,
	})
	rt.sessionStrategy = strategy
	// The service actors are named, as the actor tree shows them; a fresh
	// actor system has no actor by those names, so spawning cannot fail.
	rt.compactor, _ = rt.system.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return newCompactor(rt) }), "compactor")
	rt.retriever, _ = rt.system.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return &retrieverActor{rt: rt} }), "retriever")
}

// onSessionStop runs on the guardian when the supervisor stops a session
// for good: callers waiting on it learn why.
func (rt *Runtime) onSessionStop(child *actor.PID, reason error) {
	rt.mu.Lock()
	var e *entry
	for id, cand := range rt.entries {
		if cand.pid != nil && cand.pid.Equal(child) {
			e = cand
			delete(rt.entries, id)
			break
		}
	}
	rt.mu.Unlock()
	if e == nil {
		return
	}
	err := &SessionStoppedError{Session: e.id, Reason: reason}
	e.mu.Lock()
	e.stopErr = err
	pending := e.pending
	e.pending = nil
	e.mu.Unlock()
	for _, cmd := range pending {
		cmd.sub.fail(err)
	}
	e.hub.failAll(err)
	e.setBusy(false)
}

// activate returns the live entry of session id, spawning its actor when
// needed. rt.mu is held.
func (rt *Runtime) activateLocked(id string) (*entry, error) {
	if rt.closed {
		return nil, ErrClosed
	}
	if e := rt.entries[id]; e != nil {
		return e, nil
	}
	if _, ok := rt.deleting[id]; ok {
		return nil, fmt.Errorf("%w: %s", ErrSessionDeleted, id)
	}
	e := newEntry(id)
	props := actor.PropsFromProducer(func() actor.Actor { return newSessionActor(rt, e) },
		actor.WithGuardian(rt.sessionStrategy))
	for {
		pid, err := rt.system.Root.SpawnNamed(props, "sessions/"+id)
		if errors.Is(err, actor.ErrNameExists) {
			// A passivated actor of the same id is still stopping.
			rt.mu.Unlock()
			_ = rt.system.Root.StopFuture(pid).Wait()
			rt.mu.Lock()
			if rt.closed {
				return nil, ErrClosed
			}
			if cur := rt.entries[id]; cur != nil {
				return cur, nil
			}
			if _, ok := rt.deleting[id]; ok {
				return nil, fmt.Errorf("%w: %s", ErrSessionDeleted, id)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("actors: spawn session %s: %w", id, err)
		}
		e.pid = pid
		break
	}
	rt.entries[id] = e
	return e, nil
}

// passivate forgets an idle session whose actor is about to stop. It
// reports false when a submission arrived meanwhile.
func (rt *Runtime) passivate(e *entry) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.pending) > 0 || e.busy || rt.entries[e.id] != e {
		return false
	}
	delete(rt.entries, e.id)
	return true
}

// Open returns a handle on session id, activating it: its journal is
// replayed and a turn that was in progress resumes. A new id starts an
// empty session. The id must be a valid memory session id.
//
// A session whose journal fails its integrity checks is not activated:
// Open, and the calls of a handle whose session reactivates onto a damaged
// journal, return a *SessionStoppedError wrapping the *memory.CorruptError
// (errors.Is(err, memory.ErrCorrupt)) that names the entry. Nothing is
// replayed or appended; the other sessions are unaffected. `agcore doctor`
// reports such journals and can quarantine them.
func (rt *Runtime) Open(ctx context.Context, id string) (*Session, error) {
	if err := memory.ValidateSession(id); err != nil {
		return nil, fmt.Errorf("actors: open: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Session{rt: rt, id: id}
	if _, err := s.status(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// send delivers a command to the live actor of session id, activating it.
func (rt *Runtime) send(id string, msg any) (*entry, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	e, err := rt.activateLocked(id)
	if err != nil {
		return nil, err
	}
	if cmd, ok := msg.(*submitCmd); ok {
		e.mu.Lock()
		e.pending = append(e.pending, cmd)
		e.mu.Unlock()
	}
	rt.system.Root.Send(e.pid, msg)
	return e, nil
}

// Sessions returns the ids of the sessions that are active now.
func (rt *Runtime) Sessions() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	ids := make([]string, 0, len(rt.entries))
	for id := range rt.entries {
		ids = append(ids, id)
	}
	return ids
}

// Agents returns the names of the agent profiles, in configuration order.
func (rt *Runtime) Agents() []string { return slices.Clone(rt.agentOrder) }

// Journal returns the session journal the runtime writes, for reading
// (history, listing, export). Appending to it, or deleting from it while
// the session is active, breaks the session's fencing: use Delete.
func (rt *Runtime) Journal() memory.Journal { return rt.journal }

// Usage returns the usage and cost of every model call the runtime made
// since it started, by model.
func (rt *Runtime) Usage() providers.UsageSnapshot { return rt.tracker.Snapshot() }

// Shutdown stops the runtime. It stops accepting turns, waits for the turns
// in flight to finish until ctx is done, cancels those still running (their
// cancellation is journaled), stops every actor, and closes the journal
// and store it opened. It returns ctx's error when it had to cancel turns.
// Calling it again returns ErrClosed.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return ErrClosed
	}
	rt.closed = true
	entries := make([]*entry, 0, len(rt.entries))
	for _, e := range rt.entries {
		entries = append(entries, e)
	}
	rt.mu.Unlock()

	var waitErr error
	for _, e := range entries {
		select {
		case <-e.idleCh():
		case <-ctx.Done():
			waitErr = ctx.Err()
		}
		if waitErr != nil {
			break
		}
	}
	for _, e := range entries {
		if waitErr != nil {
			rt.system.Root.Send(e.pid, &cancelCmd{reason: "runtime shutting down"})
		}
		// A Poison is queued behind the cancel, so the cancellation is
		// journaled before the actor stops.
		if err := waitFuture(ctx, rt.system.Root.PoisonFuture(e.pid)); err != nil && waitErr == nil {
			waitErr = err
		}
		e.hub.failAll(ErrClosed)
		for _, cmd := range e.takePending() {
			cmd.sub.fail(ErrClosed)
		}
	}
	_ = waitFuture(ctx, rt.system.Root.PoisonFuture(rt.compactor))
	_ = waitFuture(ctx, rt.system.Root.PoisonFuture(rt.retriever))
	rt.stopMCP(ctx)
	rt.cancel()
	rt.system.Shutdown()
	var errs []error
	if rt.ownJournal != nil {
		errs = append(errs, rt.ownJournal.Close())
	}
	if rt.ownStore != nil {
		errs = append(errs, rt.ownStore.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("actors: shutdown: %w", err)
	}
	return waitErr
}

// waitFuture waits for f or ctx. A session whose tool ignores its context
// cannot stop before that tool returns; ctx bounds the wait for it.
func waitFuture(ctx context.Context, f *actor.Future) error {
	done := make(chan struct{})
	go func() {
		_ = f.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
