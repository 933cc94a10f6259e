package actors

// This file holds the retriever service actor, which answers knowledge
// queries for every session, so that the knowledge index has one reader.

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
)

// retrieveReq is a knowledge query for the retriever actor.
type retrieveReq struct {
	query string
	limit int
	reply chan retrieveResp
}

type retrieveResp struct {
	passages []Passage
	err      error
}

// retrieverActor is the retriever service.
type retrieverActor struct{ rt *Runtime }

// Receive implements actor.Actor.
func (r *retrieverActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *retrieveReq:
		ps, err := r.query(m)
		m.reply <- retrieveResp{passages: ps, err: err}
	case *actor.Restarting:
		r.rt.svcRestarts.retriever.Add(1)
	}
}

// query asks the knowledge base, with a panic of it turned into an error,
// so that the caller gets an answer and the next query still finds the
// service.
func (r *retrieverActor) query(m *retrieveReq) (ps []Passage, err error) {
	defer func() {
		if v := recover(); v != nil {
			ps, err = nil, r.rt.servicePanic("knowledge query", "", v)
		}
	}()
	return r.rt.cfg.Knowledge.Query(r.rt.ctx, m.query, m.limit)
}

// retrieve asks the retriever actor and waits for its answer or ctx.
func (rt *Runtime) retrieve(ctx context.Context, query string, limit int) ([]Passage, error) {
	if rt.cfg.Knowledge == nil {
		return nil, nil
	}
	reply := make(chan retrieveResp, 1)
	rt.system.Root.Send(rt.retriever, &retrieveReq{query: query, limit: limit, reply: reply})
	select {
	case r := <-reply:
		return r.passages, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
