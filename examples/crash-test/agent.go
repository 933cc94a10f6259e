// Package crashtest is a small support agent built on agcore, with the
// crash test its authors keep next to it (crash_test.go). Copy the test
// into your own project and replace the agent with yours: it runs your
// agent under injected faults (failing model calls, panicking and hanging
// tools) and SIGKILLs the process that runs it at random moments, then
// asserts with chaos.CheckDir that no acknowledged message was lost and no
// non-idempotent tool ran twice.
//
// Run it with:
//
//	go test ./examples/crash-test
package crashtest

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// OrderParams are the arguments of lookup_order.
type OrderParams struct {
	Order string `json:"order" jsonschema:"description=The order number"`
}

// LookupOrder reads an order. It is read-only, so the runtime may run an
// interrupted call of it again.
type LookupOrder struct{}

// Name implements toolsys.Typed.
func (LookupOrder) Name() string { return "lookup_order" }

// Description implements toolsys.Typed.
func (LookupOrder) Description() string { return "Looks an order up." }

// Permission implements toolsys.Typed.
func (LookupOrder) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams implements toolsys.Typed.
func (LookupOrder) SecretParams() []string { return nil }

// Execute implements toolsys.Typed.
func (LookupOrder) Execute(_ context.Context, p OrderParams, _ *toolsys.Context) (toolsys.Result, error) {
	return toolsys.Result{Content: "order " + p.Order + ": 19.99, delivered damaged"}, nil
}

// Refund pays an order back by appending a line to the ledger file. It may
// write and is not idempotent: a refund paid twice is money lost, so the
// runtime never runs an interrupted call of it again.
type Refund struct {
	// Ledger is the file the refunds are appended to.
	Ledger string
}

// Name implements toolsys.Typed.
func (Refund) Name() string { return "refund" }

// Description implements toolsys.Typed.
func (Refund) Description() string { return "Refunds an order." }

// Permission implements toolsys.Typed.
func (Refund) Permission() toolsys.Permission { return toolsys.PermWrite }

// SecretParams implements toolsys.Typed.
func (Refund) SecretParams() []string { return nil }

// Execute implements toolsys.Typed.
func (r Refund) Execute(_ context.Context, p OrderParams, tc *toolsys.Context) (toolsys.Result, error) {
	f, err := os.OpenFile(r.Ledger, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return toolsys.Result{}, err
	}
	_, err = fmt.Fprintf(f, "%s %d %s refunded order %s\n", tc.SessionID, tc.Turn, tc.CallID, p.Order)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return toolsys.Result{}, err
	}
	return toolsys.Result{Content: "refunded order " + p.Order}, nil
}

// Tools returns the agent's tools, refunds going to ledger.
func Tools(ledger string) (*toolsys.Registry, error) {
	// The agent refunds without asking anyone: it runs write tools.
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeAcceptEdits})
	if err != nil {
		return nil, err
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
	if err := reg.Register(toolsys.Bridge[OrderParams](LookupOrder{})); err != nil {
		return nil, err
	}
	if err := reg.Register(toolsys.Bridge[OrderParams](Refund{Ledger: ledger})); err != nil {
		return nil, err
	}
	return reg, nil
}

// Model returns the scripted model that stands in for the real one in
// tests: it looks the order up and refunds it, in parallel, then answers.
func Model() (*scripted.Provider, error) {
	return scripted.New(scripted.Script{Stateless: true, Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			Text: "Let me look at the order and refund it.",
			ToolCalls: []scripted.ToolCall{
				{Name: "lookup_order", Arguments: `{"order":"42"}`},
				{Name: "refund", Arguments: `{"order":"42"}`},
			},
		}},
		{Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "Order 42 is refunded."}},
	}}, scripted.Options{})
}

// Open opens the agent's runtime on the data directory dir.
func Open(dir string, model providers.Provider, tools actors.Tools) (*actors.Runtime, error) {
	return actors.New(actors.Config{
		DataDir: dir, Durability: memory.DurabilityBatch,
		Provider: model, Tools: tools,
		BasePrompt:  "You are a support agent. Look orders up before you refund them.",
		Limits:      actors.Limits{ToolTimeout: 500 * time.Millisecond},
		Retry:       providers.RetryPolicy{MaxAttempts: 3, Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond},
		IdleTimeout: -1,
	})
}
