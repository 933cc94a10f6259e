package cluster

// This file logs the changes of the cluster's membership as the member
// sees them.

import (
	"context"
	"fmt"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/eventstream"
)

// eventSub is a subscription to the actor system's event stream.
type eventSub struct {
	es  *eventstream.EventStream
	sub *eventstream.Subscription
}

func (s *eventSub) stop() { s.es.Unsubscribe(s.sub) }

// watchTopology logs every topology the member receives: the members it
// sees, those that joined and those that left; and it keeps the member's
// placement table (Owner) to the topology.
func (m *Member) watchTopology(system *actor.ActorSystem) *eventSub {
	sub := system.EventStream.Subscribe(func(ev any) {
		t, ok := ev.(*cluster.ClusterTopology)
		if !ok {
			return
		}
		addrs := func(ms []*cluster.Member) []string {
			out := make([]string, len(ms))
			for i, mb := range ms {
				out[i] = mb.Address()
			}
			return out
		}
		m.owners.setTopology(t)
		m.view.set(len(t.Members))
		m.logger.Info().Int("members", len(t.Members)).Strs("joined", addrs(t.Joined)).Strs("left", addrs(t.Left)).
			Msg("cluster: topology")
	})
	return &eventSub{es: system.EventStream, sub: sub}
}

// view is the number of members a member sees, and a channel closed at
// its next change.
type view struct {
	mu      sync.Mutex
	members int
	changed chan struct{}
}

func newView() *view { return &view{changed: make(chan struct{})} }

func (v *view) set(n int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.members = n
	close(v.changed)
	v.changed = make(chan struct{})
}

// WaitMembers waits until the member sees at least n members, or ctx ends.
func (m *Member) WaitMembers(ctx context.Context, n int) error {
	for {
		m.view.mu.Lock()
		got, changed := m.view.members, m.view.changed
		m.view.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("cluster: %s sees %d members, waiting for %d: %w", m.addr, got, n, ctx.Err())
		}
	}
}
