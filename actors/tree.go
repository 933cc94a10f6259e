package actors

// This file holds Runtime.Tree, a read-only snapshot of the supervision
// tree: the sessions with their sub-agents and calls in flight, and the
// service actors. Each session answers for itself through its mailbox;
// nothing outside an actor reads its state.

import (
	"context"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// MaxTreePassivated is the largest number of passivated sessions a Tree
// lists; Tree.PassivatedMore says when there are more.
const MaxTreePassivated = 200

// Session states of a SessionNode.
const (
	// SessionIdle: the session's actor runs and no turn is in progress.
	SessionIdle = "idle"
	// SessionRunning: a turn is in progress.
	SessionRunning = "running"
	// SessionStopping: the session was told to stop and waits for its calls
	// in flight to return.
	SessionStopping = "stopping"
)

// Kinds of a ServiceNode.
const (
	ServiceCompactor = "compactor"
	ServiceRetriever = "retriever"
	ServiceMCP       = "mcp"
	ServiceScheduler = "scheduler"
)

// Tree is a snapshot of the runtime's supervision tree, as Runtime.Tree
// gathers it. It is a plain value: nothing in it changes after the call.
type Tree struct {
	// At is when the snapshot was taken, on the runtime's clock.
	At time.Time `json:"at"`
	// Sessions are the sessions whose actor runs, sorted by id, each with
	// its running sub-agents nested under it.
	Sessions []SessionNode `json:"sessions"`
	// Passivated are the ids of the stored sessions whose actor does not
	// run (at most MaxTreePassivated of them), sorted by id.
	Passivated []string `json:"passivated"`
	// PassivatedMore says that there are more passivated sessions than
	// Passivated lists.
	PassivatedMore bool `json:"passivated_more,omitempty"`
	// Services are the runtime's service actors: the compactor, the
	// retriever, one connection actor per MCP server and the scheduler
	// (when the runtime has schedules).
	Services []ServiceNode `json:"services"`
}

// SessionNode is one live session actor of a Tree.
type SessionNode struct {
	// ID is the session id.
	ID string `json:"id"`
	// Agent is the active agent profile.
	Agent string `json:"agent"`
	// State is SessionIdle, SessionRunning or SessionStopping.
	State string `json:"state"`
	// Turn and TurnID name the running turn (State is SessionRunning).
	Turn   int    `json:"turn"`
	TurnID string `json:"turn_id,omitempty"`
	// Queued counts the submissions waiting for the running turn.
	Queued int `json:"queued"`
	// ModelCall says that a model call of the running turn is in flight.
	ModelCall bool `json:"model_call"`
	// ToolCalls are the tool calls in flight, in the order of the reply
	// that asked for them.
	ToolCalls []ToolCallNode `json:"tool_calls"`
	// Approvals counts the tool calls waiting for approval.
	Approvals int `json:"approvals"`
	// Restarts counts the restarts of the session's actor by its
	// supervisor since the session was activated.
	Restarts int `json:"restarts"`
	// SubAgents are the session's sub-agents whose actor runs.
	SubAgents []SessionNode `json:"sub_agents"`
}

// ToolCallNode is a tool call in flight.
type ToolCallNode struct {
	// ID is the call id, Name the tool's name.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Started is when the call started, on the runtime's clock.
	Started time.Time `json:"started"`
	// SubAgent is the session of the sub-agent a spawn_agent call runs.
	SubAgent string `json:"sub_agent,omitempty"`
}

// ServiceNode is one service actor of a Tree.
type ServiceNode struct {
	// Kind is ServiceCompactor, ServiceRetriever, ServiceMCP or
	// ServiceScheduler.
	Kind string `json:"kind"`
	// Name is the actor's name: "compactor", "retriever", "scheduler", or
	// "mcp/" and the server's configured name.
	Name string `json:"name"`
	// State is "running", or for an MCP server its connection state
	// (idle, connecting, ready, backoff, failed, closed).
	State string `json:"state"`
	// Error is the last failure of an MCP server, if any.
	Error string `json:"error,omitempty"`
	// InFlight counts the work under way: compactions running, scheduled
	// runs running and queued.
	InFlight int `json:"in_flight"`
	// Restarts counts the restarts of the actor by its supervisor since
	// the runtime started.
	Restarts int `json:"restarts"`
}

// serviceRestarts counts the restarts of the service actors that keep no
// record of their own across restarts.
type serviceRestarts struct {
	compactor, retriever, scheduler atomic.Int64
}

// treeCmd asks a session actor for its node of the tree. It is not
// activity: a console polling the tree does not keep a session from
// passivating.
type treeCmd struct{ reply chan treeReply }

func (*treeCmd) isCommand() {}

// treeReply is a session's answer to treeCmd: its node, without its
// sub-agents, and the ids of its sub-agents whose actor runs.
type treeReply struct {
	node     SessionNode
	children []string
}

// treeNode answers treeCmd.
func (a *sessionActor) treeNode() treeReply {
	n := SessionNode{ID: a.id, State: SessionIdle, Queued: len(a.queue), Approvals: len(a.approvals),
		Restarts: a.c.restarts, ToolCalls: []ToolCallNode{}, SubAgents: []SessionNode{}}
	if a.st != nil {
		n.Agent = a.st.Agent
	}
	if t := a.turn; t != nil {
		n.State, n.Turn, n.TurnID, n.ModelCall = SessionRunning, t.index, t.turnID, t.modelBusy
		for _, call := range t.calls {
			if run := t.running[call.ID]; run != nil {
				n.ToolCalls = append(n.ToolCalls, ToolCallNode{ID: call.ID, Name: call.Name, Started: run.started, SubAgent: run.child})
			}
		}
	}
	if a.c.stop != nil {
		n.State = SessionStopping
	}
	var children []string
	for id, ls := range a.live {
		if ls.ref != nil && !ls.reaped {
			children = append(children, id)
		}
	}
	return treeReply{node: n, children: children}
}

// schedTreeReq asks the scheduler actor for its runs in flight.
type schedTreeReq struct{ reply chan int }

// compactTreeReq asks the compactor for its compactions in flight.
type compactTreeReq struct{ reply chan int }

// Tree returns a snapshot of the supervision tree. The sessions answer
// through their mailboxes, each when it gets to the request; a session
// that stops before it answers is left out. It fails with ErrClosed after Shutdown,
// and with ctx's error when ctx ends first.
func (rt *Runtime) Tree(ctx context.Context) (Tree, error) {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return Tree{}, ErrClosed
	}
	refs := make([]*sessionRef, 0, len(rt.live))
	for _, ref := range rt.live {
		refs = append(refs, ref)
	}
	rt.mu.Unlock()

	tree := Tree{At: rt.clock.Now(), Sessions: []SessionNode{}, Passivated: []string{}, Services: []ServiceNode{}}
	// Every session is asked first, then every answer awaited, so that
	// the sessions answer side by side.
	asked := make([]chan treeReply, len(refs))
	for i, ref := range refs {
		asked[i] = make(chan treeReply, 1)
		rt.postRef(ref, &treeCmd{reply: asked[i]})
	}
	replies := make(map[string]treeReply, len(refs))
	for i, ref := range refs {
		select {
		case r := <-asked[i]:
			replies[ref.id] = r
		case <-ref.done:
			select {
			case r := <-asked[i]:
				replies[ref.id] = r // it answered, then stopped
			default:
			}
		case <-ctx.Done():
			return Tree{}, ctx.Err()
		}
	}
	tree.Sessions = assembleTree(replies)
	if err := rt.passivated(ctx, &tree, replies); err != nil {
		return Tree{}, err
	}
	services, err := rt.serviceNodes(ctx)
	if err != nil {
		return Tree{}, err
	}
	tree.Services = services
	return tree, nil
}

// assembleTree nests each sub-agent under the session that reported it and
// returns the roots, sorted by id.
func assembleTree(replies map[string]treeReply) []SessionNode {
	parent := make(map[string]string)
	for id, r := range replies {
		for _, child := range r.children {
			if _, ok := replies[child]; ok && child != id {
				parent[child] = id
			}
		}
	}
	var build func(id string, seen map[string]bool) SessionNode
	build = func(id string, seen map[string]bool) SessionNode {
		seen[id] = true
		n := replies[id].node
		kids := slices.Clone(replies[id].children)
		sort.Strings(kids)
		for _, child := range kids {
			if parent[child] == id && !seen[child] {
				n.SubAgents = append(n.SubAgents, build(child, seen))
			}
		}
		return n
	}
	ids := make([]string, 0, len(replies))
	for id := range replies {
		if _, ok := parent[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	roots := make([]SessionNode, 0, len(ids))
	seen := make(map[string]bool)
	for _, id := range ids {
		roots = append(roots, build(id, seen))
	}
	return roots
}

// passivated lists the stored sessions that have no running actor.
func (rt *Runtime) passivated(ctx context.Context, tree *Tree, live map[string]treeReply) error {
	for id, err := range rt.journal.Sessions(ctx) {
		if err != nil {
			return err
		}
		if _, ok := live[id]; ok {
			continue
		}
		if len(tree.Passivated) == MaxTreePassivated {
			tree.PassivatedMore = true
			break
		}
		tree.Passivated = append(tree.Passivated, id)
	}
	sort.Strings(tree.Passivated)
	return nil
}

// serviceNodes gathers the service actors' nodes; the compactor and the
// scheduler answer through their mailboxes.
func (rt *Runtime) serviceNodes(ctx context.Context) ([]ServiceNode, error) {
	compacting, err := askCount(ctx, rt, rt.compactor, func(reply chan int) any { return &compactTreeReq{reply: reply} })
	if err != nil {
		return nil, err
	}
	nodes := []ServiceNode{
		{Kind: ServiceCompactor, Name: "compactor", State: "running", InFlight: compacting, Restarts: int(rt.svcRestarts.compactor.Load())},
		{Kind: ServiceRetriever, Name: "retriever", State: "running", Restarts: int(rt.svcRestarts.retriever.Load())},
	}
	if rt.mcp != nil {
		for _, srv := range rt.mcp.servers {
			st := rt.MCP(srv.cfg.Name).Status()
			srv.mu.Lock()
			restarts := srv.restarts
			srv.mu.Unlock()
			n := ServiceNode{Kind: ServiceMCP, Name: "mcp/" + st.Name, State: st.State.String(), Restarts: restarts}
			if st.Err != nil {
				n.Error = rt.redactor.String(st.Err.Error())
			}
			nodes = append(nodes, n)
		}
	}
	if rt.scheduler != nil {
		runs, err := askCount(ctx, rt, rt.scheduler, func(reply chan int) any { return &schedTreeReq{reply: reply} })
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, ServiceNode{Kind: ServiceScheduler, Name: "scheduler", State: "running", InFlight: runs,
			Restarts: int(rt.svcRestarts.scheduler.Load())})
	}
	return nodes, nil
}

// askCount sends the request msg builds to pid and waits for its count.
func askCount(ctx context.Context, rt *Runtime, pid *actor.PID, msg func(chan int) any) (int, error) {
	reply := make(chan int, 1)
	rt.system.Root.Send(pid, msg(reply))
	select {
	case n := <-reply:
		return n, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
