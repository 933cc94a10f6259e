package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"

	"github.com/agcore/agcore/memory"
)

// errWrongLast says the servers refused a compare-and-append: the
// session's subject has moved past the record the writer expected. Nothing
// was stored.
var errWrongLast = errors.New("jetstream: the session's last record is not the one expected")

// publish stores m on its subject if the subject's last message is still
// expectSeq (0: the subject is empty), and returns the record's stream
// sequence. m carries a Nats-Msg-Id, so an attempt whose answer is lost
// is resent as is: the leader of a replicated stream recognises a stored
// id within the Duplicates window and answers with its sequence; the
// leader of a one-replica stream checks expectSeq first and refuses it
// (errWrongLast, which Append settles on the session's last record).
// Attempts repeat until one is answered or ctx ends;
// uncertain is true when an attempt may have been stored without the
// writer knowing (the error is then wrapped in memory.ErrOutcomeUnknown).
func (j *Journal) publish(ctx context.Context, m *nats.Msg, expectSeq uint64) (seq uint64, uncertain bool, err error) {
	m.Header.Set(njs.ExpectedLastSubjSeqHeader, strconv.FormatUint(expectSeq, 10))
	wait := 20 * time.Millisecond
	for {
		if err := ctx.Err(); err != nil {
			if uncertain {
				return 0, true, fmt.Errorf("%w: %w", memory.ErrOutcomeUnknown, err)
			}
			return 0, false, err
		}
		actx, cancel := context.WithTimeout(ctx, j.cfg.AttemptTimeout)
		ack, err := j.js.PublishMsg(actx, m, njs.WithRetryAttempts(0))
		cancel()
		if err == nil {
			return ack.Sequence, false, nil
		}
		switch {
		case isWrongLast(err):
			return 0, uncertain, errWrongLast
		case errors.Is(err, nats.ErrMaxPayload):
			return 0, false, fmt.Errorf("%w: %w", memory.ErrTooLarge, err)
		case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrBadSubject):
			if uncertain {
				return 0, true, fmt.Errorf("%w: %w", memory.ErrOutcomeUnknown, err)
			}
			return 0, false, err
		case isAPIError(err):
			// The servers answered and refused: nothing was stored by
			// this attempt.
			if uncertain {
				return 0, true, fmt.Errorf("%w: %w", memory.ErrOutcomeUnknown, err)
			}
			return 0, false, err
		}
		// No answer (timeout, no responders during an election, a
		// reconnect): the attempt may or may not have been stored.
		// errors.Is(err, nats.ErrNoResponders) means it was not, but
		// resending is right either way.
		if !errors.Is(err, nats.ErrNoResponders) {
			uncertain = true
		}
		j.log.Debug().Err(err).Str("subject", m.Subject).Msg("append unanswered; resending")
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// isWrongLast reports whether err is the servers' refusal of a
// compare-and-append (10071 on R1 streams, 10164 on replicated ones).
func isWrongLast(err error) bool {
	var ae *njs.APIError
	if !errors.As(err, &ae) {
		return false
	}
	return ae.ErrorCode == njs.JSErrCodeStreamWrongLastSequence || ae.ErrorCode == njs.JSErrCodeStreamWrongLastSequenceConstant
}

// isAPIError reports whether err is an answer from the servers.
func isAPIError(err error) bool {
	var ae *njs.APIError
	return errors.As(err, &ae)
}
