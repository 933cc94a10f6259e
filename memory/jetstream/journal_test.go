package jetstream

import (
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/memory/storetest"
)

var durabilities = []memory.Durability{memory.DurabilitySync, memory.DurabilityBatch, memory.DurabilityNone}

// newJournal returns a journal on a new connection to url.
func newJournal(t testing.TB, url string, cfg Config) *Journal {
	t.Helper()
	cfg.Conn = natstest.Connect(t, url)
	j, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestJournalConformance runs memory/storetest against one embedded server,
// in each durability mode.
func TestJournalConformance(t *testing.T) {
	for _, d := range durabilities {
		t.Run(d.String(), func(t *testing.T) {
			storetest.RunJournalTests(t, func(t *testing.T, opts memory.JournalOptions) storetest.Harness {
				opts.Durability = d
				srv := natstest.RunServer(t, natstest.Options{SyncAlways: d == memory.DurabilitySync})
				cfg := Config{Options: opts, Streams: 3}
				j := newJournal(t, srv.URL(), cfg)
				h := storetest.Harness{
					Journal: j,
					Corrupt: func(session string, seq uint64, raw []byte) error { return j.corruptEntry(session, seq, raw) },
					Stored:  j.storedEntry,
					AlterSnapshot: func(session string, alter func([]byte) []byte) error {
						return j.alterSnapshot(session, alter)
					},
				}
				h.Reopen = func(t *testing.T) memory.Journal {
					if d != memory.DurabilityNone {
						srv = srv.Restart(t)
					}
					return newJournal(t, srv.URL(), cfg)
				}
				return h
			})
		})
	}
}
