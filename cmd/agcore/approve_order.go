package main

// approvalOrder holds back the question about a call of the turn being
// played until the turn's events have reached the call's ApprovalPending,
// so that the reply streamed before the call is on screen, whole, before
// the question. The approver and the event stream are two paths from the
// runtime, and either can arrive first. Calls of other sessions (the
// turn's sub-agents, whose events the turn's stream does not carry) are
// asked about at once.
type approvalOrder struct {
	// session is the id of the session whose turn is played.
	session string
	// seen holds the calls whose ApprovalPending was rendered before they
	// were asked about.
	seen map[string]bool
	// held holds the calls asked about before their ApprovalPending.
	held map[string]*approvalAsk
}

// newApprovalOrder returns the order of the turn of session.
func newApprovalOrder(session string) *approvalOrder {
	return &approvalOrder{session: session, seen: map[string]bool{}, held: map[string]*approvalAsk{}}
}

// asked takes a call the approver was asked about and returns it when it
// can be asked about now, or nil when it waits for its event.
func (o *approvalOrder) asked(q *approvalAsk) *approvalAsk {
	id := q.req.CallID
	if q.req.SessionID != o.session || o.seen[id] {
		delete(o.seen, id)
		return q
	}
	o.held[id] = q
	return nil
}

// pending takes the ApprovalPending of call id, once rendered, and returns
// the call when it was held, or nil when it was not asked about yet.
func (o *approvalOrder) pending(id string) *approvalAsk {
	if q := o.held[id]; q != nil {
		delete(o.held, id)
		return q
	}
	o.seen[id] = true
	return nil
}
