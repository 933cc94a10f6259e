package chaos

import (
	"context"
	"errors"
	"io"

	"github.com/agcore/agcore/providers"
)

// faultyStream plays a drawn fault on the chunks of a stream: a delay
// before the first one, an undecodable chunk, or a cut before the end.
type faultyStream struct {
	providers.Stream
	ctx  context.Context
	plan plan
	// received counts the chunks passed on.
	received int
	err      error
}

// Recv implements providers.Stream.
func (s *faultyStream) Recv() (providers.Chunk, error) {
	if s.err != nil {
		return providers.Chunk{}, s.err
	}
	if s.received == 0 && s.plan.slow > 0 {
		if err := wait(s.ctx, s.plan.slow); err != nil {
			s.err = err
			return providers.Chunk{}, err
		}
	}
	switch {
	case s.plan.malformed && s.received >= s.plan.badSkip:
		s.err = malformedError()
		return providers.Chunk{}, s.err
	case s.plan.cut && s.received >= s.plan.cutAfter:
		s.err = truncatedError()
		return providers.Chunk{}, s.err
	}
	c, err := s.Stream.Recv()
	if errors.Is(err, io.EOF) && (s.plan.malformed || s.plan.cut) {
		// The reply was shorter than the fault: it never ends well.
		if s.plan.malformed {
			s.err = malformedError()
		} else {
			s.err = truncatedError()
		}
		return providers.Chunk{}, s.err
	}
	if err == nil {
		s.received++
	}
	return c, err
}
