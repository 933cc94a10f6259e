package main

import (
	"testing"

	"github.com/agcore/agcore/toolsys"
)

// TestApprovalOrder_WaitsForTheEvent checks that a call of the played
// session is asked about only once its ApprovalPending was rendered,
// whichever came first, and that a call of another session is asked about
// at once.
func TestApprovalOrder_WaitsForTheEvent(t *testing.T) {
	ask := func(session, call string) *approvalAsk {
		return &approvalAsk{req: toolsys.ApprovalRequest{Request: toolsys.Request{SessionID: session, CallID: call}}}
	}
	o := newApprovalOrder("s1")

	early := ask("s1", "c1")
	if got := o.asked(early); got != nil {
		t.Fatal("a call asked about before its event was shown at once")
	}
	if got := o.pending("c1"); got != early {
		t.Fatalf("the event of a held call returned %v, want the call", got)
	}
	if got := o.pending("c1"); got != nil {
		t.Fatal("a call was released twice")
	}

	late := ask("s1", "c2")
	if got := o.pending("c2"); got != nil {
		t.Fatal("an event with no call asked about released one")
	}
	if got := o.asked(late); got != late {
		t.Fatal("a call whose event was shown was held")
	}

	sub := ask("s1/subagent/c3", "c3")
	if got := o.asked(sub); got != sub {
		t.Fatal("a sub-agent's call, whose event the turn's stream does not carry, was held")
	}
}
