package actors

// This file holds Session.Accept.

import (
	"context"

	"github.com/agcore/agcore/messages"
)

// Accepted says that a submission's user message is durable: journaled,
// with the turn that runs it.
type Accepted struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	TurnID  string `json:"turn_id"`
}

// Accept submits input as Stream does and returns once its user message is
// journaled (durably, with the journal's durability), while the turn goes
// on. Follow the turn with Watch, or get its result with Submit and the
// same turn id (WithTurnID), which does not run it again. A message queued
// behind a running turn (Limits.MidTurn) is journaled when its turn
// starts, so Accept returns then; with MidTurnReject it fails with
// ErrSessionBusy. A submission whose turn id the session has journaled
// already is accepted at once. If ctx ends first, Accept returns ctx's
// error and the submission may still run.
func (s *Session) Accept(ctx context.Context, input messages.Message, opts ...SubmitOption) (Accepted, error) {
	acc := Accepted{Session: s.id}
	for ev, err := range s.Stream(ctx, input, opts...) {
		if err != nil {
			return acc, err
		}
		switch e := ev.(type) {
		case messages.TurnStarted:
			acc.Turn, acc.TurnID = e.Turn, e.TurnID
			return acc, nil
		case messages.TurnEnded:
			acc.Turn, acc.TurnID = e.Turn, e.TurnID
			return acc, nil
		}
	}
	return acc, ErrSlowSubscriber
}
