package actors

// This file holds Session.History.

import (
	"context"
	"errors"
	"fmt"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// History returns the session's conversation as the model sees it, read
// from the journal: user messages, assistant replies with their tool
// calls, and the tool replies in call order (a call that was cancelled or
// interrupted answered as the model was told), after any compaction
// (the summary in place of what it replaced); the system prompt, rebuilt
// for every model call, is not part of it. The calls of a turn still
// running are shown without a reply until they have one. A session with
// no journal yet has an empty history.
func (s *Session) History(ctx context.Context) ([]messages.Message, error) {
	st, err := s.rt.journal.Load(ctx, s.id)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		return []messages.Message{}, nil
	case err != nil:
		return nil, fmt.Errorf("actors: history of %s: %w", s.id, err)
	}
	return st.Messages(memory.ViewOptions{KeepPending: true}), nil
}
