package cluster

// This file answers which member owns a session without activating it,
// and where that member serves its HTTP API.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
)

// ErrNoOwner is returned by Owner when the member sees no member that
// hosts sessions (it has not seen the cluster yet, or every member left).
var ErrNoOwner = errors.New("cluster: no member hosts sessions")

// ErrNoHTTP is returned by HTTPAddress when the member answered but
// announces no HTTP address (Config.HTTPAddress was empty on it).
var ErrNoHTTP = errors.New("cluster: member announces no HTTP address")

// owners is the member's copy of the placement table: the rendezvous hash
// over the members of the last topology, as protoactor's disthash builds
// it, and the HTTP addresses the members announced.
type owners struct {
	mu   sync.Mutex
	rdv  *cluster.Rendezvous
	http map[string]string // remote address -> HTTP address
}

func newOwners() *owners { return &owners{rdv: cluster.NewRendezvous(), http: map[string]string{}} }

// setTopology replaces the placement table with the members of t, and
// forgets the HTTP addresses of the members that left.
func (o *owners) setTopology(t *cluster.ClusterTopology) {
	rdv := cluster.NewRendezvous()
	rdv.UpdateMembers(t.Members)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rdv = rdv
	for _, mb := range t.Left {
		delete(o.http, mb.Address())
	}
}

// Owner returns the remote address (host:port) of the member that owns
// session now, as this member sees the cluster: the member a request to
// the session's grain is sent to. It activates nothing. It uses the same
// rendezvous hash over the same topology as protoactor's disthash
// lookup, so the members that see the same topology agree; while a
// topology change spreads, two members may name different owners for a
// moment. It fails with ErrNoOwner when no member hosts sessions.
func (m *Member) Owner(session string) (string, error) {
	m.owners.mu.Lock()
	rdv := m.owners.rdv
	m.owners.mu.Unlock()
	addr := rdv.GetByClusterIdentity(&cluster.ClusterIdentity{Kind: Kind, Identity: session})
	if addr == "" {
		return "", fmt.Errorf("owner of session %q: %w", session, ErrNoOwner)
	}
	return addr, nil
}

// HTTPAddress returns the HTTP address that the member at remote address
// addr announces (its Config.HTTPAddress), asking that member's info
// actor once, within Config.Attempt, and remembering the answer until the
// member leaves the cluster. It fails with ErrNoHTTP when that member
// announces none, and with the request's error when it does not answer.
func (m *Member) HTTPAddress(ctx context.Context, addr string) (string, error) {
	if addr == m.addr {
		if m.cfg.HTTPAddress == "" {
			return "", fmt.Errorf("member %s: %w", addr, ErrNoHTTP)
		}
		return m.cfg.HTTPAddress, nil
	}
	m.owners.mu.Lock()
	h, ok := m.owners.http[addr]
	m.owners.mu.Unlock()
	if ok {
		return h, nil
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("member %s: HTTP address: %w", addr, err)
	}
	env, err := m.wire.Encode(&MemberStatusRequest{})
	if err != nil {
		return "", err
	}
	v, err := m.cl.ActorSystem.Root.RequestFuture(actor.NewPID(addr, infoActorName), env, m.cfg.Attempt).Result()
	if err != nil {
		return "", fmt.Errorf("member %s: HTTP address: %w", addr, err)
	}
	a, err := m.decodeAnswer(v)
	if err != nil {
		return "", fmt.Errorf("member %s: HTTP address: %w", addr, err)
	}
	reply, ok := a.(*MemberStatusReply)
	if !ok {
		return "", fmt.Errorf("member %s: HTTP address: answer %T, want *MemberStatusReply", addr, a)
	}
	if reply.HTTP == "" {
		return "", fmt.Errorf("member %s: %w", addr, ErrNoHTTP)
	}
	m.owners.mu.Lock()
	m.owners.http[addr] = reply.HTTP
	m.owners.mu.Unlock()
	return reply.HTTP, nil
}
