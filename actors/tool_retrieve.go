package actors

// This file holds retrieveTool, the retrieve tool of agents with
// AgentProfile.Retrieve: a knowledge query through the retriever service.

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/toolsys"
)

const (
	// retrieveToolName is the tool agents with Retrieve get.
	retrieveToolName = "retrieve"
	// retrieveToolLimit is the largest number of passages the retrieve
	// tool returns.
	retrieveToolLimit = 10
)

// retrieveParams are the arguments of retrieve.
type retrieveParams struct {
	Query string `json:"query" jsonschema:"description=What to look for."`
	Limit int    `json:"limit,omitempty" jsonschema:"description=At most this many passages (default 5; at most 10).,minimum=0"`
}

// retrieveTool is the retrieve tool.
type retrieveTool struct{ rt *Runtime }

var _ toolsys.Typed[retrieveParams] = (*retrieveTool)(nil)

func (t *retrieveTool) Name() string { return retrieveToolName }
func (t *retrieveTool) Description() string {
	return "Search the knowledge base and return the passages that best match a query."
}
func (t *retrieveTool) Permission() toolsys.Permission { return toolsys.PermReadOnly }
func (t *retrieveTool) SecretParams() []string         { return nil }

// Execute asks the retriever service.
func (t *retrieveTool) Execute(ctx context.Context, p retrieveParams, _ *toolsys.Context) (toolsys.Result, error) {
	if p.Query == "" {
		return toolsys.ErrorResult(`retrieve: the query is empty`), nil
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 5
	}
	ps, err := t.rt.retrieve(ctx, p.Query, min(limit, retrieveToolLimit))
	if err != nil {
		return toolsys.ErrorResult("retrieve: %v", err), nil
	}
	if len(ps) == 0 {
		return toolsys.Result{Content: fmt.Sprintf("no passage matches %q", p.Query)}, nil
	}
	return toolsys.Result{Content: renderPassages(ps), Metadata: map[string]any{"passages": len(ps)}}, nil
}
