package httpapi

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"time"

	"github.com/agcore/agcore/memory"
)

// JournalEntry is one entry of a session's journal.
type JournalEntry struct {
	Seq uint64 `json:"seq"`
	// Type is the event's type: user_message, assistant_message,
	// tool_call_started, tool_result, turn_completed, ...
	Type string    `json:"type"`
	At   time.Time `json:"at"`
	// Data is the event as the journal stores it.
	Data json.RawMessage `json:"data"`
}

// JournalEntries is the body of GET /v1/sessions/{id}/journal.
type JournalEntries struct {
	Session string         `json:"session"`
	Entries []JournalEntry `json:"entries"`
}

// journalReader reads a session's journal entries in order; memory.Journal
// implements it.
type journalReader interface {
	Read(ctx context.Context, session string, from uint64) iter.Seq2[memory.Entry, error]
}

func (s *Server) handleJournal(w http.ResponseWriter, r *http.Request) {
	id, err := sessionID(r)
	if err != nil {
		writeError(w, err)
		return
	}
	jr, ok := s.journal.(journalReader)
	if !ok {
		writeError(w, apiErr(http.StatusNotFound, CodeNotFound, "this server's journal cannot be read entry by entry"))
		return
	}
	out := JournalEntries{Session: id, Entries: []JournalEntry{}}
	for e, err := range jr.Read(r.Context(), id, 1) {
		if err != nil {
			writeError(w, err)
			return
		}
		out.Entries = append(out.Entries, JournalEntry{Seq: e.Envelope.Seq, Type: e.Envelope.Type, At: e.Envelope.At, Data: e.Envelope.Data})
	}
	if len(out.Entries) == 0 {
		writeError(w, apiErr(http.StatusNotFound, CodeSessionNotFound, "session %q does not exist; create it with POST /v1/sessions", id))
		return
	}
	writeJSON(w, http.StatusOK, out)
}
