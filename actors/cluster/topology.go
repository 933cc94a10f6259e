package cluster

// This file logs the changes of the cluster's membership as the member
// sees them.

import (
	"context"
	"fmt"
	"slices"
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
		m.view.set(addrs(t.Members))
		m.logger.Info().Int("members", len(t.Members)).Strs("joined", addrs(t.Joined)).Strs("left", addrs(t.Left)).
			Msg("cluster: topology")
	})
	return &eventSub{es: system.EventStream, sub: sub}
}

// view is the members a member sees (their addresses, sorted), as the
// topology events told it, and a channel closed at its next change. It is
// read instead of protoactor's MemberList, whose accessors race with its
// updates.
type view struct {
	mu      sync.Mutex
	members []string
	changed chan struct{}
}

func newView() *view { return &view{changed: make(chan struct{})} }

func (v *view) set(addrs []string) {
	addrs = slices.Clone(addrs)
	slices.Sort(addrs)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.members = addrs
	close(v.changed)
	v.changed = make(chan struct{})
}

// list returns a copy of the members' addresses.
func (v *view) list() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.members)
}

// WaitMembers waits until the member sees at least n members, or ctx ends.
func (m *Member) WaitMembers(ctx context.Context, n int) error {
	for {
		m.view.mu.Lock()
		got, changed := len(m.view.members), m.view.changed
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
