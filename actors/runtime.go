package actors

// This file holds the Runtime: its construction, its accessors and
// Shutdown. Its directory of live sessions is in runtime_sessions.go.

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
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors/internal/registry"
	"github.com/agcore/agcore/internal/logging"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/supervisor"
	"github.com/agcore/agcore/telemetry"
	"github.com/agcore/agcore/toolsys"
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
	swarm         SubAgents
	hooks         Hooks
	agents        map[string]*agent
	agentOrder    []string
	defaultAgent  string
	base          promptTemplate
	providers     *providers.Registry
	tracker       *providers.Tracker
	tools         *toolset
	journal       memory.Journal
	sessionMemory SessionMemory
	// retry is the policy of every model call but its OnRetry hook
	// (modelCall.retryPolicy adds it): Config.Retry with the runtime's
	// decider, clock and jitter source.
	retry     providers.RetryPolicy
	tel       *telemetry.Telemetry
	unobserve func() error // stops the active sessions gauge

	ownStore   *memory.Store
	ownJournal interface{ Close() error }
	// inMemory journals into a memory.MemoryJournal beside an in-memory
	// store (NewInMemory).
	inMemory bool

	system          *actor.ActorSystem
	sessionStrategy actor.SupervisorStrategy
	// workers run the actors' mailboxes and the sessions' model and tool
	// calls, which work counts.
	workers   *workerPool
	work      sync.WaitGroup
	compactor *actor.PID
	retriever *actor.PID
	mcp       *mcpSet // nil without Config.MCPServers

	scheduler *actor.PID // nil without Config.Schedules
	// svcRestarts counts the service actors' restarts (Runtime.Tree).
	svcRestarts serviceRestarts

	// ctx is cancelled when the runtime has shut down; journal calls and
	// turns derive from it.
	ctx    context.Context
	cancel context.CancelFunc

	// outputTypes holds the decoders of SubmitAs's output types, by type.
	outputTypes sync.Map

	// instances numbers session actor instances (see idleTick).
	instances atomic.Uint64
	// gens numbers the work sessions start (see sessionCarry.gen).
	gens atomic.Uint64

	// The directory of live sessions (runtime_sessions.go).
	mu       sync.Mutex
	live     map[string]*sessionRef
	deleting map[string]struct{} // sessions Delete is removing
	// opening counts, by session, the Opens loading and activating a
	// session on their own goroutine (activateLoaded), which Delete waits
	// for (openDone, on mu).
	opening     map[string]int
	openDone    sync.Cond
	stopReasons map[*sessionRef]error // why the supervisor stopped them
	closed      bool
}

// New starts a runtime. It fails with an error wrapping ErrConfig when the
// configuration is incomplete or invalid, naming the field.
func New(cfg Config) (*Runtime, error) { return start(cfg, false) }

// start starts a runtime, whose journal is a memory.MemoryJournal when
// inMemory is set.
func start(cfg Config, inMemory bool) (*Runtime, error) {
	rt := &Runtime{cfg: cfg, logger: cfg.Logger, clock: cfg.Clock, ids: cfg.IDs, rnd: cfg.Rand, live: make(map[string]*sessionRef), inMemory: inMemory}
	rt.openDone.L = &rt.mu
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
	if !logs(rt.logger) {
		// The zero Logger discards, but reports the debug level: redacting
		// what it would discard costs a JSON round trip per event.
		rt.logger = zerolog.Nop()
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
	rt.swarm = cfg.SubAgents.withDefaults()
	rt.tracker = providers.NewTracker(cfg.Prices)
	rt.retry = rt.retryPolicy()

	if err := rt.configureTelemetry(); err != nil {
		return nil, err
	}
	if err := rt.configureProviders(); err != nil {
		return nil, err
	}
	if err := rt.configureMCP(); err != nil {
		return nil, err
	}
	prompts, err := cfg.Prompts.compiler()
	if err != nil {
		return nil, configErr("Prompts", "%v", err)
	}
	base, err := compileIn(prompts, "base prompt", cfg.BasePrompt)
	if err != nil {
		return nil, configErr("BasePrompt", "%v", err)
	}
	rt.base = newPromptTemplate(base)
	if cfg.Stream < StreamDefault || cfg.Stream > StreamOff {
		return nil, configErr("Stream", "unknown stream mode %v", cfg.Stream)
	}
	for ref, m := range cfg.StructuredOutput {
		if err := validOutputMode(m); err != nil {
			return nil, configErr(fmt.Sprintf("StructuredOutput[%q]", ref), "%v", err)
		}
	}
	if rt.agents, rt.agentOrder, err = compileAgents(cfg.Agents, rt.limits, prompts); err != nil {
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
	if err := rt.configureTools(); err != nil {
		return nil, err
	}
	if err := rt.openJournal(); err != nil {
		return nil, err
	}
	rt.ctx, rt.cancel = context.WithCancel(context.Background())
	rt.startActors()
	rt.startMCP()
	rt.observeSessions()
	return rt, nil
}

// logs reports whether l writes anything at all.
func logs(l zerolog.Logger) bool {
	e := l.WithLevel(zerolog.PanicLevel)
	if e == nil {
		return false
	}
	e.Discard()
	return true
}

// Redactor returns the redactor that masks what the runtime lets out
// (Config.Redactor, or the one it chose); give it to whatever else writes
// the runtime's data out, so that it masks the same credentials.
func (rt *Runtime) Redactor() *redact.Redactor { return rt.redactor }

// NewInMemory starts a runtime that keeps everything in process memory,
// for tests, examples and benchmarks: nothing survives the process. It
// journals into a memory.MemoryJournal (no Badger, no fsync, no writer
// goroutine) and opens no store: its prompts carry the session memory of
// Config.SessionMemory when set, and Backup fails with ErrNoStore. cfg's
// DataDir, Store and Journal must be empty.
func NewInMemory(cfg Config) (*Runtime, error) {
	if cfg.DataDir != "" || cfg.Store != nil || cfg.Journal != nil {
		return nil, configErr("DataDir", "NewInMemory takes no DataDir, Store or Journal")
	}
	cfg.Durability = memory.DurabilityNone
	return start(cfg, true)
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

// configureTools composes the runtime's own tools, as Config.Knowledge and
// Config.SubAgents enable them, with Config.Tools.
func (rt *Runtime) configureTools() error {
	ts := newToolset(rt.cfg.Tools, toolsys.Config{Logger: rt.logger, Redactor: rt.redactor})
	if rt.cfg.Knowledge != nil {
		if err := addOwn[retrieveParams](ts, &retrieveTool{rt: rt}, func(ag *agent) bool { return ag.Retrieve }); err != nil {
			return configErr("Knowledge", "%v", err)
		}
	}
	if rt.swarm.Enabled {
		if err := addOwn[spawnParams](ts, &spawnTool{rt: rt}, func(ag *agent) bool { return ag.allows(SpawnAgentToolName) }); err != nil {
			return configErr("SubAgents", "%v", err)
		}
	}
	if rt.swarm.Handoff {
		if err := addOwn[transferParams](ts, &transferTool{rt: rt}, func(ag *agent) bool { return ag.allows(TransferToolName) }); err != nil {
			return configErr("SubAgents", "%v", err)
		}
	}
	rt.tools = ts
	return nil
}

func (rt *Runtime) openJournal() error {
	opts := memory.JournalOptions{Durability: rt.cfg.Durability, Clock: rt.clock.Now, Logger: rt.logger, Redactor: rt.redactor,
		// A session actor appends from its mailbox: a snapshot is folded off it.
		SnapshotInBackground: true}
	if rt.inMemory {
		return rt.openInMemory(opts)
	}
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
	j, err := memory.NewJournal(store, opts)
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

// openInMemory opens NewInMemory's journal, in memory. It opens no store:
// the session memory is Config.SessionMemory's, if any (no tool could
// write to a store of the runtime's own).
func (rt *Runtime) openInMemory(opts memory.JournalOptions) error {
	j, err := memory.NewMemoryJournal(opts)
	if err != nil {
		return configErr("Durability", "%v", err)
	}
	rt.journal, rt.ownJournal = j, j
	rt.sessionMemory = rt.cfg.SessionMemory
	return nil
}

func (rt *Runtime) startActors() {
	rt.workers = newWorkerPool(defaultWorkers(), defaultMaxWorkers(), 300)
	slogger := slog.New(logging.SlogHandler(rt.logger.With().Str("component", "protoactor").Logger()))
	rt.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slogger }))
	registry.Compact(rt.system)
	rt.sessionStrategy = supervisor.NewSessionStrategy(supervisor.SessionOptions{
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
	// The service actors are named, as the actor tree shows them; a fresh
	// actor system has no actor by those names, so spawning cannot fail.
	rt.compactor, _ = rt.system.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return newCompactor(rt) }, actor.WithDispatcher(rt.workers)), "compactor")
	rt.retriever, _ = rt.system.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return &retrieverActor{rt: rt} }, actor.WithDispatcher(rt.workers)), "retriever")
	if rt.cfg.Schedules != nil {
		rt.scheduler, _ = rt.system.Root.SpawnNamed(actor.PropsFromProducer(newSchedulerProducer(rt), actor.WithDispatcher(rt.workers)), "scheduler")
	}
}

// Open returns a handle on session id, activating it: its journal is
// replayed and a turn that was in progress resumes. A new id starts an
// empty session. The id must be a valid memory session id. Open of an
// active session whose activation is journaled returns at once. When the
// session is not active, Open loads the journal and journals the
// activation on the caller's goroutine, then hands the state to the new
// actor, without waiting for it.
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
	if rt.activated(id) || rt.activateLoaded(ctx, id) {
		return s, nil
	}
	if _, err := s.status(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Sessions returns the ids of the sessions that are active now.
func (rt *Runtime) Sessions() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	ids := make([]string, 0, len(rt.live))
	for id := range rt.live {
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
// and store it opened. It returns ctx's error when it had to cancel turns,
// or when ctx ended while a tool that ignores its context still ran: that
// tool is left to end by itself, and nothing it returns is journaled.
// Calling it again returns ErrClosed.
// The scheduler (Config.Schedules) stops first: no schedule fires once
// Shutdown has begun, and the runs already started are turns like others.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return ErrClosed
	}
	rt.closed = true
	rt.mu.Unlock()
	// No schedule fires from now on; runs already handed to their
	// sessions are drained with the other turns.
	if rt.scheduler != nil {
		_ = waitFuture(ctx, rt.system.Root.PoisonFuture(rt.scheduler))
	}
	// Sub-agents stop with their parents.
	refs := slices.DeleteFunc(rt.liveRefs(), func(r *sessionRef) bool { return r.child })

	var waitErr error
	drains := make([]chan struct{}, len(refs))
	for i, ref := range refs {
		drains[i] = make(chan struct{})
		rt.postRef(ref, &drainCmd{reply: drains[i]})
	}
	for i, ref := range refs {
		select {
		case <-drains[i]:
		case <-ref.done:
		case <-ctx.Done():
			waitErr = ctx.Err()
		}
		if waitErr != nil {
			break
		}
	}
	for _, ref := range refs {
		rt.postRef(ref, &stopCmd{cancelReason: "runtime shutting down", err: ErrClosed})
	}
	for _, ref := range refs {
		select {
		case <-ref.done:
		case <-ctx.Done():
			if waitErr == nil {
				waitErr = ctx.Err()
			}
		}
	}
	_ = waitFuture(ctx, rt.system.Root.PoisonFuture(rt.compactor))
	_ = waitFuture(ctx, rt.system.Root.PoisonFuture(rt.retriever))
	rt.stopMCP(ctx)
	rt.cancel()
	// Calls that outlived their session (a tool that ignores its context)
	// are waited for as long as ctx allows.
	if err := waitGroup(ctx, &rt.work); err != nil && waitErr == nil {
		waitErr = err
	}
	rt.system.Shutdown()
	_ = rt.unobserve()
	// A tool that ignores its context keeps its worker: it is left to end
	// by itself once ctx ends.
	if err := rt.workers.stopWithin(ctx); err != nil && waitErr == nil {
		waitErr = err
	}
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

// waitGroup waits for wg or ctx.
func waitGroup(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitFuture waits for f or ctx.
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

func (rt *Runtime) workspaceRoot() string {
	if rt.cfg.Workspace == nil {
		return ""
	}
	return rt.cfg.Workspace.Root()
}
