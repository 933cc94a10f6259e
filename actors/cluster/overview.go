package cluster

// This file holds the cluster's overview: each member answers, through a
// named actor of its own, which sessions its runtime has active.

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/anypb"
)

// infoActorName is the name of every member's info actor.
const infoActorName = "agcore-member"

// MemberStatusRequest asks a member which sessions its runtime has active.
type MemberStatusRequest struct{}

// MemberStatusReply answers MemberStatusRequest.
type MemberStatusReply struct {
	Member string `json:"member"`
	// Sessions are the ids of the sessions active on the member's
	// runtime, sorted: those it hosts, and copies a move left behind that
	// have not been fenced or passivated yet.
	Sessions []string `json:"sessions"`
	// HTTP is the member's HTTP address (Config.HTTPAddress), empty when
	// it serves no HTTP API.
	HTTP string `json:"http,omitempty"`
}

// MemberInfo is one member as Overview saw it.
type MemberInfo struct {
	// Address is the member's remote address (host:port).
	Address string `json:"address"`
	// Sessions are the sessions active on its runtime, sorted.
	Sessions []string `json:"sessions"`
	// HTTP is the base URL of its HTTP API, when it serves one.
	HTTP string `json:"http,omitempty"`
	// Error says why the member did not answer; Sessions is empty then.
	Error string `json:"error,omitempty"`
}

// infoActor answers MemberStatusRequest on a member.
type infoActor struct{ m *Member }

func (a *infoActor) Receive(c actor.Context) {
	env, ok := c.Message().(*anypb.Any)
	if !ok || c.Sender() == nil {
		return
	}
	v, err := a.m.wire.Decode(env)
	var reply any
	switch {
	case err != nil:
		reply = &UnknownReply{Member: a.m.addr, Type: env.GetTypeUrl()}
	default:
		if _, ok := v.(*MemberStatusRequest); ok {
			ids := a.m.cfg.Runtime.Sessions()
			slices.Sort(ids)
			reply = &MemberStatusReply{Member: a.m.addr, Sessions: ids, HTTP: a.m.cfg.HTTPAddress}
		} else {
			reply = &UnknownReply{Member: a.m.addr, Type: env.GetTypeUrl()}
		}
	}
	out, err := a.m.wire.Encode(reply)
	if err != nil {
		return
	}
	c.Respond(out)
}

// Overview asks every member this one sees for the sessions its runtime
// has active, at once, each within Config.Attempt, and returns the
// members sorted by address. A member that does not answer is listed with
// its Error. It fails only when ctx ends first.
func (m *Member) Overview(ctx context.Context) ([]MemberInfo, error) {
	env, err := m.wire.Encode(&MemberStatusRequest{})
	if err != nil {
		return nil, err
	}
	addrs := m.Members()
	out := make([]MemberInfo, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			out[i] = m.memberInfo(addr, env)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cluster: overview: %w", err)
	}
	return out, nil
}

func (m *Member) memberInfo(addr string, env *anypb.Any) MemberInfo {
	info := MemberInfo{Address: addr}
	v, err := m.cl.ActorSystem.Root.RequestFuture(actor.NewPID(addr, infoActorName), env, m.cfg.Attempt).Result()
	if err != nil {
		info.Error = err.Error()
		return info
	}
	a, err := m.decodeAnswer(v)
	if err != nil {
		info.Error = err.Error()
		return info
	}
	reply, ok := a.(*MemberStatusReply)
	if !ok {
		info.Error = fmt.Sprintf("answer %T, want *MemberStatusReply", a)
		return info
	}
	info.Sessions, info.HTTP = reply.Sessions, reply.HTTP
	if info.Sessions == nil {
		info.Sessions = []string{}
	}
	return info
}
