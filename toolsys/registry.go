package toolsys

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/internal/logging"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/redact"
)

// ErrDuplicateTool is returned (wrapped) by Register when a tool with the same
// name is already registered.
var ErrDuplicateTool = errors.New("duplicate tool name")

// ErrInvalidToolName is returned (wrapped) by Register for a name that is
// empty, longer than 64 characters, or not made of [a-zA-Z0-9_-].
var ErrInvalidToolName = errors.New("invalid tool name")

var toolNameRE = regexp.MustCompile(`\A[a-zA-Z0-9_-]{1,64}\z`)

// Config configures a Registry. The zero value is valid and fails closed:
// tools up to PermReadOnly run, PermWrite and PermExecute calls need an
// approver (see Permissions), secrets come from AGCORE_SECRET_* environment
// variables, output is capped at 64 KiB, nothing is logged.
type Config struct {
	// Permissions is the pipeline every call passes before it runs. Nil
	// means the zero PermissionConfig: ModeAsk with no rules and no
	// approver, so PermNone and PermReadOnly tools run and PermWrite and
	// PermExecute calls are refused, naming the settings to change, unless
	// the call's context carries an approver (WithApprover). A program that
	// wants such calls to run without asking builds a pipeline that says so
	// (ModeAcceptEdits, ModeBypass, Allow rules or an Approver).
	Permissions *Permissions
	// Secrets resolves <secret_ref:NAME> placeholders. Nil means
	// EnvSecrets{} (variables AGCORE_SECRET_NAME).
	Secrets SecretStore
	// OutputLimit caps a result's Content, in bytes (see CapOutput). Zero
	// means DefaultOutputLimit; negative means no cap.
	OutputLimit int
	// Logger receives a debug line per call and an error line per recovered
	// panic, masked by Redactor. The zero Logger discards.
	Logger zerolog.Logger
	// Redactor masks credentials in every result (with
	// redact.Redactor.Content, so that files keep their name=value lines),
	// error and log line of a call, and in the log lines a tool writes to
	// its Context's Logger. The values of an enumerable Secrets store, and
	// every value substituted into a call, are added to it, replaced by
	// their <secret_ref:NAME> placeholders. Nil means a new Redactor; pass
	// the process's so that its configured keys are masked too.
	Redactor *redact.Redactor
	// Now is the clock for latency statistics. Nil means time.Now.
	Now func() time.Time
}

// Registry holds the tools an agent can call and dispatches calls to them.
// It is safe for concurrent use. The zero Registry is ready to use with the
// zero Config, fail-closed permissions included.
type Registry struct {
	once sync.Once
	cfg  Config

	mu    sync.RWMutex
	tools map[string]*entry
	// defs caches Definitions until a tool is registered or unregistered
	// (nil when it must be built again); gen counts those changes.
	defs []messages.ToolDefinition
	gen  uint64
}

// entry is one registered tool with its metadata and statistics.
type entry struct {
	tool     Tool
	tags     []string
	category string
	source   Source

	mu    sync.Mutex
	stats Stats
}

// NewRegistry returns an empty registry. cfg is copied.
func NewRegistry(cfg Config) *Registry {
	r := &Registry{cfg: cfg}
	r.init()
	return r
}

// init fills in defaults once.
func (r *Registry) init() {
	r.once.Do(func() {
		if r.cfg.Permissions == nil {
			r.cfg.Permissions = defaultPermissions()
		}
		if r.cfg.Secrets == nil {
			r.cfg.Secrets = EnvSecrets{}
		}
		if r.cfg.Now == nil {
			r.cfg.Now = time.Now
		}
		if r.cfg.Redactor == nil {
			r.cfg.Redactor = redact.New()
		}
		if l, ok := r.cfg.Secrets.(SecretLister); ok {
			for name, v := range l.Secrets() {
				r.cfg.Redactor.Add(v, SecretPlaceholder(name))
			}
		}
		r.cfg.Logger = r.cfg.Logger.With().Str("component", "toolsys").Logger()
	})
}

// RegisterOption sets metadata of a tool at registration.
type RegisterOption func(*entry)

// WithTags tags the tool (for ListByTag).
func WithTags(tags ...string) RegisterOption {
	return func(e *entry) { e.tags = append(e.tags, tags...) }
}

// WithCategory puts the tool in a category (for ListByCategory).
func WithCategory(category string) RegisterOption {
	return func(e *entry) { e.category = category }
}

// WithSource records where the tool comes from (ToolInfo.Source,
// Stats.Source, ListBySource). Without it, or with an empty source, a tool
// is SourceBuiltin.
func WithSource(source Source) RegisterOption {
	return func(e *entry) { e.source = source }
}

// Register adds t. A name already registered yields an error wrapping
// ErrDuplicateTool; an invalid name, one wrapping ErrInvalidToolName.
func (r *Registry) Register(t Tool, opts ...RegisterOption) error {
	r.init()
	if t == nil {
		return fmt.Errorf("toolsys: register: %w: nil tool", ErrInvalidToolName)
	}
	name := t.Name()
	if !toolNameRE.MatchString(name) {
		return fmt.Errorf("toolsys: register %q: %w (want 1 to 64 of [a-zA-Z0-9_-])", name, ErrInvalidToolName)
	}
	e := &entry{tool: t}
	for _, o := range opts {
		o(e)
	}
	if e.source == "" {
		e.source = SourceBuiltin
	}
	slices.Sort(e.tags)
	e.tags = slices.Compact(e.tags)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[name]; dup {
		return fmt.Errorf("toolsys: register %q: %w", name, ErrDuplicateTool)
	}
	if r.tools == nil {
		r.tools = map[string]*entry{}
	}
	r.tools[name] = e
	r.defs, r.gen = nil, r.gen+1
	return nil
}

// MustRegister is Register that panics on error, for registration at start.
func (r *Registry) MustRegister(t Tool, opts ...RegisterOption) {
	if err := r.Register(t, opts...); err != nil {
		panic(err)
	}
}

// RegisterTyped bridges a typed tool (see Bridge) and registers it:
//
//	err := toolsys.RegisterTyped[EchoParams](reg, EchoTool{})
func RegisterTyped[P any](r *Registry, t Typed[P], opts ...RegisterOption) error {
	return r.Register(Bridge[P](t), opts...)
}

// MustRegisterTyped is RegisterTyped that panics on error.
func MustRegisterTyped[P any](r *Registry, t Typed[P], opts ...RegisterOption) {
	r.MustRegister(Bridge[P](t), opts...)
}

// Unregister removes the named tool and returns it.
func (r *Registry) Unregister(name string) (Tool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.tools[name]
	if !ok {
		return nil, false
	}
	delete(r.tools, name)
	r.defs, r.gen = nil, r.gen+1
	return e.tool, true
}

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) {
	e := r.entry(name)
	if e == nil {
		return nil, false
	}
	return e.tool, true
}

func (r *Registry) entry(name string) *entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tools[name]
}

// entries returns the entries that keep says to keep, sorted by name.
func (r *Registry) entries(keep func(*entry) bool) []*entry {
	r.mu.RLock()
	out := make([]*entry, 0, len(r.tools))
	for _, e := range r.tools {
		if keep == nil || keep(e) {
			out = append(out, e)
		}
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *entry) int { return strings.Compare(a.tool.Name(), b.tool.Name()) })
	return out
}

func toolsOf(es []*entry) []Tool {
	out := make([]Tool, len(es))
	for i, e := range es {
		out[i] = e.tool
	}
	return out
}

// List returns the tools sorted by name.
func (r *Registry) List() []Tool { return toolsOf(r.entries(nil)) }

// Names returns the tool names, sorted.
func (r *Registry) Names() []string { return namesOf(r.entries(nil)) }

func namesOf(es []*entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.tool.Name()
	}
	return out
}

// ListByTag returns the tools carrying tag, sorted by name.
func (r *Registry) ListByTag(tag string) []Tool {
	return toolsOf(r.entries(func(e *entry) bool { return slices.Contains(e.tags, tag) }))
}

// ListByCategory returns the tools in category, sorted by name.
func (r *Registry) ListByCategory(category string) []Tool {
	return toolsOf(r.entries(func(e *entry) bool { return e.category == category }))
}

// ListBySource returns the tools from source, sorted by name.
func (r *Registry) ListBySource(source Source) []Tool {
	return toolsOf(r.entries(func(e *entry) bool { return e.source == source }))
}

// ToolInfo is a registered tool with its registration metadata.
type ToolInfo struct {
	Tool     Tool
	Tags     []string
	Category string
	// Source is where the tool comes from (SourceBuiltin unless it was
	// registered WithSource).
	Source Source
}

// Info returns the named tool with its tags, category and source.
func (r *Registry) Info(name string) (ToolInfo, bool) {
	e := r.entry(name)
	if e == nil {
		return ToolInfo{}, false
	}
	return ToolInfo{Tool: e.tool, Tags: slices.Clone(e.tags), Category: e.category, Source: e.source}, true
}

// Definitions returns the tools as a provider request describes them,
// sorted by name. Each tool's Description and Schema are read once after
// the registry last changed (a Register or Unregister), not on every call:
// a tool whose description changes is registered again.
func (r *Registry) Definitions() []messages.ToolDefinition {
	r.mu.RLock()
	defs, gen := r.defs, r.gen
	r.mu.RUnlock()
	if defs == nil {
		defs = definitionsOf(r.entries(nil))
		r.mu.Lock()
		if r.gen == gen {
			r.defs = defs
		}
		r.mu.Unlock()
	}
	return slices.Clone(defs)
}

func definitionsOf(es []*entry) []messages.ToolDefinition {
	out := make([]messages.ToolDefinition, len(es))
	for i, e := range es {
		out[i] = Definition(e.tool)
	}
	return out
}

// Definition returns the provider-facing description of t.
func Definition(t Tool) messages.ToolDefinition {
	return messages.ToolDefinition{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()}
}

// Stats are a tool's call statistics since registration.
type Stats struct {
	// Source is where the tool comes from, to group statistics by.
	Source Source
	// Calls counts dispatched calls, refused ones included.
	Calls int64
	// Errors counts calls that ended in an IsError result or a Go error.
	Errors int64
	// Timeouts counts calls whose context deadline passed.
	Timeouts int64
	// TotalLatency and MaxLatency are measured around the whole dispatch.
	TotalLatency time.Duration
	MaxLatency   time.Duration
}

// AvgLatency is TotalLatency / Calls (zero without calls).
func (s Stats) AvgLatency() time.Duration {
	if s.Calls == 0 {
		return 0
	}
	return s.TotalLatency / time.Duration(s.Calls)
}

// Stats returns the named tool's statistics.
func (r *Registry) Stats(name string) (Stats, bool) {
	e := r.entry(name)
	if e == nil {
		return Stats{}, false
	}
	return e.snapshot(), true
}

// snapshot returns the entry's statistics with its source.
func (e *entry) snapshot() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	s.Source = e.source
	return s
}

// AllStats returns the statistics of every tool, by name.
func (r *Registry) AllStats() map[string]Stats {
	out := map[string]Stats{}
	for _, e := range r.entries(nil) {
		out[e.tool.Name()] = e.snapshot()
	}
	return out
}

func (e *entry) record(d time.Duration, failed, timedOut bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stats.Calls++
	if failed {
		e.stats.Errors++
	}
	if timedOut {
		e.stats.Timeouts++
	}
	e.stats.TotalLatency += d
	e.stats.MaxLatency = max(e.stats.MaxLatency, d)
}

// Redactor returns the registry's redactor: it knows every secret value of
// an enumerable store and every value substituted into a call so far.
func (r *Registry) Redactor() *redact.Redactor {
	r.init()
	return r.cfg.Redactor
}

// Call dispatches one call: an unknown name gives an IsError result listing
// the available tools; then the permission pipeline (Config.Permissions, or
// the fail-closed default; a refusal is an IsError result naming the stage), secret substitution in the
// tool's SecretParams (a misplaced or unknown placeholder is an IsError
// result), the tool's Execute (a panic is recovered into an IsError result
// "tool X panicked: ..."), scrubbing of secret values from the result and the
// error, and the output cap. Statistics are recorded for known tools.
//
// A returned error is a fault of the runtime (including ctx ending), wrapped
// with the tool's name. tc may be nil.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage, tc *Context) (Result, error) {
	r.init()
	e := r.entry(name)
	if e == nil {
		return unknownTool(name, r.Names()), nil
	}
	return r.call(ctx, e, args, tc)
}

func unknownTool(name string, available []string) Result {
	if len(available) == 0 {
		return ErrorResult("unknown tool %q: no tools are available", name)
	}
	return ErrorResult("unknown tool %q; available tools: %s", name, strings.Join(available, ", "))
}

func (r *Registry) call(ctx context.Context, e *entry, args json.RawMessage, tc *Context) (Result, error) {
	if tc == nil {
		tc = &Context{}
	}
	start := r.cfg.Now()
	res, err := r.dispatch(ctx, e.tool, args, tc)
	took := r.cfg.Now().Sub(start)
	timedOut := errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded)
	e.record(took, err != nil || res.IsError, timedOut)
	r.cfg.Logger.Debug().Str("tool", e.tool.Name()).Str("session", tc.SessionID).Str("call_id", tc.CallID).
		Int("args_bytes", len(args)).Dur("took", took).Bool("is_error", res.IsError).
		AnErr("error", err).Msg("tool call")
	return res, err
}

func (r *Registry) dispatch(ctx context.Context, t Tool, args json.RawMessage, tc *Context) (Result, error) {
	name := t.Name()
	p := r.cfg.Permissions
	req := Request{Tool: name, Permission: t.Permission(), Args: args, SessionID: tc.SessionID, CallID: tc.CallID}
	// The subject costs a parse of the arguments (or the tool's own work):
	// it is computed only when a hook, a rule or a reachable approver may
	// read it.
	if p.usesSubject() || (p.mayAsk(req.Permission) && ApproverFromContext(ctx) != nil) {
		req.Subject, req.Subjects = subjectOf(t, args, tc)
	}
	if err := p.Check(ctx, req); err != nil {
		var pe *PermissionError
		if errors.As(err, &pe) {
			return Result{Content: r.cfg.Redactor.String(pe.Error()), IsError: true}, nil
		}
		return Result{}, r.cfg.Redactor.Error(fmt.Errorf("tool %s: %w", name, err))
	}
	args, used, err := SubstituteSecrets(args, t.SecretParams(), r.cfg.Secrets)
	if err != nil {
		return ErrorResult("tool %s: %v", name, err), nil
	}
	for n, v := range used {
		r.cfg.Redactor.Add(v, SecretPlaceholder(n))
	}
	call := *tc
	call.Logger = logging.Redacted(tc.Logger, r.cfg.Redactor)
	if d := callTimeout(ctx); d > 0 {
		// The call's deadline starts now that it may run (see
		// WithCallTimeout).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	res, err := r.execute(ctx, t, args, &call)
	res = redactResult(r.cfg.Redactor, res)
	if err != nil {
		return Result{}, r.cfg.Redactor.Error(fmt.Errorf("tool %s: %w", name, err))
	}
	if r.cfg.OutputLimit >= 0 {
		if capped := CapOutput(res.Content, r.cfg.OutputLimit); len(capped) != len(res.Content) {
			md := make(map[string]any, len(res.Metadata)+2)
			for k, v := range res.Metadata {
				md[k] = v
			}
			md["truncated"] = true
			md["original_size"] = len(res.Content)
			res.Content, res.Metadata = capped, md
		}
	}
	return res, nil
}

// execute runs the tool, turning a panic into an IsError result.
func (r *Registry) execute(ctx context.Context, t Tool, args json.RawMessage, tc *Context) (res Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			r.cfg.Logger.Error().Str("tool", t.Name()).Str("call_id", tc.CallID).
				Str("panic", r.cfg.Redactor.String(fmt.Sprint(v))).
				Str("stack", r.cfg.Redactor.String(string(debug.Stack()))).Msg("tool panicked")
			res, err = ErrorResult("tool %s panicked: %s", t.Name(), r.cfg.Redactor.String(fmt.Sprint(v))), nil
		}
	}()
	return t.Execute(ctx, args, tc)
}

// View is a read-only view of a registry restricted to an allow-list: an
// agent sees and calls only the tools it is allowed. It follows later
// registrations. It is safe for concurrent use.
type View struct {
	r     *Registry
	allow []*regexp.Regexp
}

// View returns a view of the tools whose names match one of the allow
// patterns (exact names or globs such as "mcp__fs__*"). An empty list
// allows no tool; "*" allows all.
func (r *Registry) View(allow []string) *View {
	v := &View{r: r}
	for _, a := range allow {
		v.allow = append(v.allow, regexp.MustCompile(globRegexp(a, false)))
	}
	return v
}

func (v *View) allowed(name string) bool {
	for _, re := range v.allow {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

func (v *View) entries() []*entry {
	return v.r.entries(func(e *entry) bool { return v.allowed(e.tool.Name()) })
}

// Get returns the named tool if the view allows it.
func (v *View) Get(name string) (Tool, bool) {
	if !v.allowed(name) {
		return nil, false
	}
	return v.r.Get(name)
}

// List returns the allowed tools sorted by name.
func (v *View) List() []Tool { return toolsOf(v.entries()) }

// Names returns the allowed tool names, sorted.
func (v *View) Names() []string { return namesOf(v.entries()) }

// Definitions returns the allowed tools' definitions, sorted by name.
func (v *View) Definitions() []messages.ToolDefinition { return definitionsOf(v.entries()) }

// Call is Registry.Call restricted to the view: a tool outside it is
// unknown, and the result lists the view's tools only.
func (v *View) Call(ctx context.Context, name string, args json.RawMessage, tc *Context) (Result, error) {
	v.r.init()
	e := v.r.entry(name)
	if e == nil || !v.allowed(name) {
		return unknownTool(name, v.Names()), nil
	}
	return v.r.call(ctx, e, args, tc)
}
