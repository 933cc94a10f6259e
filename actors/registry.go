package actors

// This file holds compactRegistry, which sizes the process registry of the
// runtime's actor system.

import (
	"github.com/asynkron/protoactor-go/actor"
	cmap "github.com/orcaman/concurrent-map"
)

// registryBuckets is the number of buckets of the process registry of the
// runtime's actor system. protoactor makes 1,024, each a concurrent map of
// 32 locked shards: 32,768 maps (66,000 objects, 2.8 MB) that every garbage
// collection marks, for a registry that holds one entry per live actor.
// 32 buckets of 32 shards, 1,024 locked maps, keep contention on it low at
// the core counts agcore runs on.
const registryBuckets = 32

// compactRegistry replaces the buckets of the process registry of a new
// actor system with registryBuckets buckets, moving the processes the
// system registered as it started (its event stream, its dead letters).
// It must run before anything else uses the system.
func compactRegistry(system *actor.ActorSystem) {
	old := system.ProcessRegistry.LocalPIDs
	sm := &actor.SliceMap{LocalPIDs: make([]cmap.ConcurrentMap, registryBuckets)}
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
