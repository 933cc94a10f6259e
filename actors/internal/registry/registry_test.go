package registry

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// TestCompact: a compacted registry has Buckets buckets, still finds what
// the system registered as it started, and registers, finds and removes
// what is spawned afterwards.
func TestCompact(t *testing.T) {
	system := actor.NewActorSystem()
	Compact(system)
	if got := len(system.ProcessRegistry.LocalPIDs.LocalPIDs); got != Buckets {
		t.Fatalf("%d buckets, want %d", got, Buckets)
	}
	if _, ok := system.ProcessRegistry.GetLocal("eventstream"); !ok {
		t.Fatal("the event stream registered as the system started is not found")
	}
	got := make(chan any, 1)
	pid := system.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			got <- s
		}
	}))
	if _, ok := system.ProcessRegistry.GetLocal(pid.Id); !ok {
		t.Fatalf("spawned actor %s is not found", pid.Id)
	}
	system.Root.Send(pid, "hello")
	if m := <-got; m != "hello" {
		t.Fatalf("received %v", m)
	}
	if err := system.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
	if _, ok := system.ProcessRegistry.GetLocal(pid.Id); ok {
		t.Fatal("a stopped actor is still registered")
	}
}
