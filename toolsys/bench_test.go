package toolsys

import (
	"context"
	"encoding/json"
	"testing"
)

type noopParams struct {
	Path  string `json:"path"`
	Limit int    `json:"limit,omitempty" jsonschema:"minimum=1"`
	Mode  string `json:"mode,omitempty" jsonschema:"enum=fast,enum=slow"`
}

type noopTool struct{}

func (noopTool) Name() string           { return "noop" }
func (noopTool) Description() string    { return "Does nothing." }
func (noopTool) Permission() Permission { return PermReadOnly }
func (noopTool) SecretParams() []string { return nil }
func (noopTool) Execute(context.Context, noopParams, *Context) (Result, error) {
	return Result{Content: "ok"}, nil
}

var benchArgs = json.RawMessage(`{"path":"src/main.go","limit":20,"mode":"fast"}`)

// BenchmarkDispatchTyped measures a typed no-op call end to end: registry
// lookup, permission pipeline, secret scan, parse, validate, decode, execute,
// scrub and cap. The Bridge sub-benchmark is the typed bridge alone, the
// baseline the registry's overhead compares against.
func BenchmarkDispatchTyped(b *testing.B) {
	perms, err := NewPermissions(PermissionConfig{Mode: ModeAsk})
	if err != nil {
		b.Fatal(err)
	}
	r := NewRegistry(Config{Permissions: perms, Secrets: MapSecrets{}})
	MustRegisterTyped[noopParams](r, noopTool{})
	tc := &Context{CallID: "bench"}
	ctx := context.Background()
	b.Run("Registry", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res, err := r.Call(ctx, "noop", benchArgs, tc); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	})
	// The runtime calls with an approver of its own in the context (the
	// session records approvals): a read-only call the mode admits still
	// never reaches it.
	actx := WithApprover(ctx, ApproverFunc(func(context.Context, ApprovalRequest) (Approval, error) {
		return Approval{}, nil
	}))
	b.Run("RegistryApproverInContext", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res, err := r.Call(actx, "noop", benchArgs, tc); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	})
	tool := Bridge[noopParams](noopTool{})
	b.Run("Bridge", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res, err := tool.Execute(ctx, benchArgs, tc); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	})
}
