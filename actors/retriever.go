package actors

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

const (
	// retrieveToolName is the tool agents with Retrieve get.
	retrieveToolName = "retrieve"
	// retrieveLayerLimit is the number of passages the prompt layer holds.
	retrieveLayerLimit = 3
	// retrieveToolLimit is the default and largest number of passages the
	// retrieve tool returns.
	retrieveToolLimit = 10
)

var retrieveSchema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What to look for."},"limit":{"type":"integer","description":"At most this many passages (default 5, at most 10)."}},"required":["query"]}`)

// retrieveDefinition describes the retrieve tool to the model.
var retrieveDefinition = messages.ToolDefinition{
	Name:        retrieveToolName,
	Description: "Search the knowledge base and return the passages that best match a query.",
	Parameters:  retrieveSchema,
}

// retrieveReq is a knowledge query for the retriever actor.
type retrieveReq struct {
	query string
	limit int
	reply chan retrieveResp
}

type retrieveResp struct {
	passages []Passage
	err      error
}

// retrieverActor is the service actor that answers knowledge queries for
// every session, so that the knowledge index has one reader.
type retrieverActor struct{ rt *Runtime }

// Receive implements actor.Actor.
func (r *retrieverActor) Receive(ctx actor.Context) {
	if req, ok := ctx.Message().(*retrieveReq); ok {
		ps, err := r.rt.cfg.Knowledge.Query(r.rt.ctx, req.query, req.limit)
		req.reply <- retrieveResp{passages: ps, err: err}
	}
}

// retrieve asks the retriever actor and waits for its answer or ctx.
func (rt *Runtime) retrieve(ctx context.Context, query string, limit int) ([]Passage, error) {
	if rt.cfg.Knowledge == nil {
		return nil, nil
	}
	reply := make(chan retrieveResp, 1)
	rt.system.Root.Send(rt.retriever, &retrieveReq{query: query, limit: limit, reply: reply})
	select {
	case r := <-reply:
		return r.passages, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// retrieveTool runs the retrieve tool.
func (rt *Runtime) retrieveTool(ctx context.Context, raw json.RawMessage) (toolsys.Result, error) {
	var args struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(raw, &args); err != nil || args.Query == "" {
		return toolsys.ErrorResult(`retrieve: arguments must be {"query": "...", "limit": n}`), nil
	}
	if args.Limit <= 0 {
		args.Limit = 5
	}
	args.Limit = min(args.Limit, retrieveToolLimit)
	ps, err := rt.retrieve(ctx, args.Query, args.Limit)
	if err != nil {
		return toolsys.ErrorResult("retrieve: %v", err), nil
	}
	if len(ps) == 0 {
		return toolsys.Result{Content: fmt.Sprintf("no passage matches %q", args.Query)}, nil
	}
	return toolsys.Result{Content: renderPassages(ps), Metadata: map[string]any{"passages": len(ps)}}, nil
}
