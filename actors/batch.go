package actors

import (
	"fmt"

	"github.com/agcore/agcore/messages"
)

// journalBatch gathers the facts of one step of a turn (a model reply and
// the tool calls it starts at once, or a reply and the end of the turn)
// into a single journal append. Each staged fact is folded into the state
// at once, so the actor reads the same state as with one append per fact;
// what the facts lead to (stream events, tool executors) waits in after
// until the batch is durable, so the journal still comes first.
type journalBatch struct {
	events []messages.JournalEvent
	after  []func()
}

// openBatch starts staging facts; flush writes them.
func (a *sessionActor) openBatch() {
	if a.batch == nil {
		a.batch = &journalBatch{}
	}
}

// stage journals events as part of the open batch, or at once when no
// batch is open.
func (a *sessionActor) stage(events ...messages.JournalEvent) {
	b := a.batch
	if b == nil {
		a.appendEvents(events...)
		return
	}
	a.fold(a.tail+uint64(len(b.events)), events)
	b.events = append(b.events, events...)
}

// afterJournal runs f once the open batch is durable, or at once when no
// batch is open. Functions run in the order they were given.
func (a *sessionActor) afterJournal(f func()) {
	if a.batch == nil {
		f()
		return
	}
	a.batch.after = append(a.batch.after, f)
}

// flush writes the open batch in one append, then runs what waited on it.
// It does nothing when no batch is open. A failed append panics, as
// appendEvents does: the state folded ahead of it is rebuilt from the
// journal on restart.
func (a *sessionActor) flush() {
	b := a.batch
	if b == nil {
		return
	}
	a.batch = nil
	if len(b.events) > 0 {
		tail, err := a.rt.journal.Append(a.rt.ctx, a.id, a.st.Activation, a.tail, b.events...)
		if err != nil {
			panic(fmt.Errorf("journal append %s/%d: %w", a.id, a.tail+1, err))
		}
		a.tail = tail
	}
	for _, f := range b.after {
		f()
	}
}
