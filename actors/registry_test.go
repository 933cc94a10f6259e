package actors

import (
	"testing"

	"github.com/agcore/agcore/actors/internal/registry"

	"github.com/agcore/agcore/messages"
)

// TestRuntime_ProcessRegistryIsCompact: the runtime's actor system keeps
// registry.Buckets buckets of processes, not protoactor's 1,024, and still
// finds what the system registered before the buckets were replaced, and
// what the runtime spawns after.
func TestRuntime_ProcessRegistryIsCompact(t *testing.T) {
	rt := newIdleRuntime(t)
	if got := len(rt.system.ProcessRegistry.LocalPIDs.LocalPIDs); got != registry.Buckets {
		t.Fatalf("the process registry has %d buckets, want %d", got, registry.Buckets)
	}
	if _, ok := rt.system.ProcessRegistry.GetLocal("eventstream"); !ok {
		t.Error("the event stream registered as the system started is not found")
	}
	for _, pid := range []string{rt.compactor.Id, rt.retriever.Id} {
		if _, ok := rt.system.ProcessRegistry.GetLocal(pid); !ok {
			t.Errorf("service actor %s is not found", pid)
		}
	}
	sess, err := rt.Open(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Submit(t.Context(), messages.UserText("hi")); err != nil {
		t.Fatal(err)
	}
}
