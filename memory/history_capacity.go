package memory

// A live session keeps its State for as long as it is resident, so the
// history's unused capacity is paid for by every idle session. append
// doubles a full slice, which leaves a history up to half empty; the
// history grows by a smaller step instead, and a history built in bulk
// (a journal load, a snapshot decode) is sized to what it holds.

// minHistoryGrowth is the fewest message slots the history grows by.
const minHistoryGrowth = 4

// historyGrowth returns how many slots a full history of n messages grows
// by: half of it, at least minHistoryGrowth, so that at most a third of
// the array is unused (doubling leaves up to half). Growing copies the
// history once per n/2 messages, where every model request copies all of
// it (see Messages). Folding 50-turn sessions (BenchmarkStateFoldTurns),
// growing by half costs about 0.5 µs per turn more than doubling and makes
// fewer allocations; by a quarter, 0.9 µs more and more allocations; and
// clipping the history as each turn ends (a copy of it per turn) over ten
// times the whole fold.
func historyGrowth(n int) int { return max(minHistoryGrowth, n/2) }

// reserve makes room in History and HistorySeq for one more message.
func (s *State) reserve() {
	if len(s.History) < cap(s.History) && len(s.HistorySeq) < cap(s.HistorySeq) {
		return
	}
	n := len(s.History) + historyGrowth(len(s.History))
	s.History = resize(s.History, n)
	s.HistorySeq = resize(s.HistorySeq, n)
}

// Trim releases the unused capacity of History and HistorySeq, copying
// each into an array of its length; it does nothing to a slice that has
// none. Journal.Load returns a trimmed State, and a session actor trims
// the State it starts from, which a journal may have built by appending.
func (s *State) Trim() {
	s.History = fit(s.History)
	s.HistorySeq = fit(s.HistorySeq)
}

// resize returns a copy of v in an array of n slots, or v when it already
// has n.
func resize[T any](v []T, n int) []T {
	if cap(v) == n {
		return v
	}
	out := make([]T, len(v), n)
	copy(out, v)
	return out
}

// fit returns v in an array of exactly its length: v itself when it has
// no unused capacity, nil when it is empty.
func fit[T any](v []T) []T {
	if len(v) == 0 {
		return nil
	}
	return resize(v, len(v))
}
