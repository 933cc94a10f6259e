// Package registry sizes the process registry of an actor system: the
// runtime's, and each cluster member's.
package registry

import (
	"github.com/asynkron/protoactor-go/actor"
	cmap "github.com/orcaman/concurrent-map"
)

// Buckets is the number of buckets Compact leaves in a process registry. protoactor makes 1,024, each a concurrent map of
// 32 locked shards: 32,768 maps (66,000 objects, 2.8 MB) that every garbage
// collection marks, for a registry that holds one entry per live actor.
// 32 buckets of 32 shards, 1,024 locked maps, keep contention on it low at
// the core counts agcore runs on.
const Buckets = 32

// Compact replaces the buckets of the process registry of a new actor
// system with Buckets buckets, moving the processes the system registered
// as it started (its event stream, its dead letters). It must run before
// anything else uses the system.
func Compact(system *actor.ActorSystem) {
	old := system.ProcessRegistry.LocalPIDs
	sm := &actor.SliceMap{LocalPIDs: make([]cmap.ConcurrentMap, Buckets)}
	for i := range sm.LocalPIDs {
		sm.LocalPIDs[i] = cmap.New()
	}
	// IterCb walks each shard under its lock; Items would start a
	// goroutine per shard, 32,768 of them.
	for _, bucket := range old.LocalPIDs {
		bucket.IterCb(func(id string, p any) { sm.GetBucket(id).Set(id, p) })
	}
	system.ProcessRegistry.LocalPIDs = sm
}
