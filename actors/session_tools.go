package actors

// This file holds toolset, every tool a session may call: the runtime's
// own tools (retrieve, spawn_agent, transfer_to_agent), toolsys.Typed
// tools in a registry of their own, composed with Config.Tools. A session
// finds a tool, and what it may do with it, here and nowhere else.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// toolset composes the runtime's own tools with Config.Tools. It is built
// by New and read-only afterwards (Config.Tools may change underneath, as
// MCP servers come and go).
type toolset struct {
	own  *toolsys.Registry
	user Tools
	// kinds says, for each of the runtime's own tools, which agents are
	// offered it and whether the session carries it out itself.
	kinds map[string]ownTool
}

// ownTool is what the session needs to know of one of the runtime's own
// tools beyond the toolsys.Tool in the registry.
type ownTool struct {
	// offered reports whether an agent is offered the tool.
	offered func(*agent) bool
	// session is set for a tool the session actor carries out itself
	// (it acts on the session); the others run in an executor like any
	// tool.
	session sessionTool
}

// sessionTool is a tool call that the session actor carries out itself.
// start begins the call run of the running turn: it returns the result
// and true when the call is over at once, or false when the session will
// complete the call later (completeTool).
type sessionTool interface {
	start(a *sessionActor, run *toolRun) (toolsys.Result, bool)
}

// actorTool is implemented by a Typed[P] among the runtime's own tools
// that the session actor carries out itself, with the parameters the
// model gave, parsed and checked as toolsys.Bridge does.
type actorTool[P any] interface {
	toolsys.Typed[P]
	start(a *sessionActor, run *toolRun, p P) (toolsys.Result, bool)
}

func newToolset(user Tools, cfg toolsys.Config) *toolset {
	return &toolset{own: toolsys.NewRegistry(cfg), user: user, kinds: make(map[string]ownTool)}
}

// addOwn registers t among the runtime's own tools, offered to the agents
// offered accepts. It fails when Config.Tools holds a tool of the same
// name.
func addOwn[P any](ts *toolset, t toolsys.Typed[P], offered func(*agent) bool) error {
	if ts.user != nil {
		if _, taken := ts.user.Get(t.Name()); taken {
			return fmt.Errorf("the tool %q is already registered in Tools", t.Name())
		}
	}
	if err := toolsys.RegisterTyped(ts.own, t); err != nil {
		return err
	}
	k := ownTool{offered: offered}
	if at, ok := t.(actorTool[P]); ok {
		k.session = &typedSessionTool[P]{parser: toolsys.Bridge[P](paramsOf[P]{at}), tool: at}
	}
	ts.kinds[t.Name()] = k
	return nil
}

// definitions describes the tools ag may call to the model: those of
// Config.Tools its allow-list admits, then the runtime's own tools it is
// offered.
func (ts *toolset) definitions(ag *agent) []messages.ToolDefinition {
	var defs []messages.ToolDefinition
	if ts.user != nil {
		for _, d := range ts.user.Definitions() {
			if _, own := ts.kinds[d.Name]; !own && ag.allows(d.Name) {
				defs = append(defs, d)
			}
		}
	}
	for _, d := range ts.own.Definitions() {
		if ts.kinds[d.Name].offered(ag) {
			defs = append(defs, d)
		}
	}
	return defs
}

// allowed reports whether ag may call the named tool.
func (ts *toolset) allowed(ag *agent, name string) bool {
	if k, own := ts.kinds[name]; own {
		return k.offered(ag)
	}
	return ag.allows(name)
}

// get returns the named tool.
func (ts *toolset) get(name string) (toolsys.Tool, bool) {
	if _, own := ts.kinds[name]; own {
		return ts.own.Get(name)
	}
	if ts.user == nil {
		return nil, false
	}
	return ts.user.Get(name)
}

// rerunnable reports whether a call of the named tool may run again after
// an interruption: its tool is idempotent or read-only.
func (ts *toolset) rerunnable(name string) bool {
	t, ok := ts.get(name)
	return ok && (t.Idempotent() || t.Permission() <= toolsys.PermReadOnly)
}

// sessionTool returns the named tool when the session carries its calls
// out itself, nil otherwise.
func (ts *toolset) sessionTool(name string) sessionTool {
	return ts.kinds[name].session
}

// call runs the named tool in an executor: one of the runtime's own
// through its registry, any other through Config.Tools, under the call's
// deadline timeout (none when zero or negative). A registry starts that
// deadline once its permission pipeline lets the call through
// (toolsys.WithCallTimeout), so that an approval's wait does not count;
// other Tools implementations, which ask for no approval, get it at once.
func (ts *toolset) call(ctx context.Context, name string, raw json.RawMessage, tc *toolsys.Context, timeout time.Duration) (toolsys.Result, error) {
	var tools Tools = ts.own
	if _, own := ts.kinds[name]; !own {
		if ts.user == nil {
			return toolsys.ErrorResult("unknown tool %q: no tools are configured", name), nil
		}
		tools = ts.user
	}
	if _, reg := tools.(*toolsys.Registry); reg {
		ctx = toolsys.WithCallTimeout(ctx, timeout)
	} else if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return tools.Call(ctx, name, raw, tc)
}

// typedSessionTool is the sessionTool of an actorTool[P]: it parses the
// call's arguments through parser, then starts the call with them.
type typedSessionTool[P any] struct {
	parser toolsys.Tool
	tool   actorTool[P]
}

func (s *typedSessionTool[P]) start(a *sessionActor, run *toolRun) (toolsys.Result, bool) {
	res, err := s.parser.Execute(context.Background(), json.RawMessage(run.call.Arguments), nil)
	switch {
	case err != nil:
		return toolsys.ErrorResult("invalid arguments for tool %s: %v", s.tool.Name(), err), true
	case res.IsError:
		return res, true
	}
	return s.tool.start(a, run, res.Metadata[paramsKey].(P))
}

// paramsKey holds the parsed parameters in the result of a paramsOf tool.
const paramsKey = "params"

// paramsOf is a Typed[P] whose Execute returns its parameters: bridged
// with toolsys.Bridge, it turns a call's raw arguments into P exactly as
// the tool's own bridge would (empty optionals stripped, validated against
// the schema, decoded with unknown fields rejected, prechecked), with the
// same error results.
type paramsOf[P any] struct{ toolsys.Typed[P] }

func (p paramsOf[P]) Execute(_ context.Context, params P, _ *toolsys.Context) (toolsys.Result, error) {
	return toolsys.Result{Metadata: map[string]any{paramsKey: params}}, nil
}

// Precheck runs the tool's own Precheck, if it has one.
func (p paramsOf[P]) Precheck(params P) error {
	if pc, ok := p.Typed.(toolsys.Prechecker[P]); ok {
		return pc.Precheck(params)
	}
	return nil
}

var _ toolsys.Prechecker[struct{}] = paramsOf[struct{}]{}
