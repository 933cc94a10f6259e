// Package memory keeps what agcore remembers, in one Badger database per
// runtime: each session's journal (the source of truth for recovery), the
// conversation history folded from it, a key-value memory per session, and
// the knowledge pages of the knowledge sub-package. It also holds the token
// counters and the pure compaction policy the compactor calls. A journal
// that need not outlive the process can be kept in process memory instead
// (MemoryJournal), as actors.NewInMemory does.
//
//	store, err := memory.Open(memory.Options{Dir: "data"})
//	if err != nil {
//		return err
//	}
//	defer store.Close()
//	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityBatch})
//	if err != nil {
//		return err
//	}
//	act, tail, err := j.Activate(ctx, "s1", "node-a")
//	if err != nil {
//		return err
//	}
//	user := messages.UserMessage{Turn: 0, TurnID: "t-1", Message: messages.UserText("hi")}
//	if tail, err = j.Append(ctx, "s1", act, tail, user); err != nil {
//		return err
//	}
//	st, err := j.Load(ctx, "s1")
//	if err != nil {
//		return err
//	}
//	req := st.Messages(memory.ViewOptions{}) // ready for a provider
//
// # Key spaces
//
// Every concern owns a key prefix: j/ journal entries, t/ journal heads (tail
// and activation), s/ snapshots, m/ session memory, k/ knowledge. Session ids
// are validated (ValidateSession): no '/', no NUL, not empty.
//
// # Journal
//
// Journal is a compare-and-append log per session. Append takes the tail the
// writer expects and its activation number; a writer that lost a race gets
// ErrConflict, and a writer whose activation was superseded by a newer
// Activate gets ErrFenced and must stop. BadgerJournal is also an
// ActivateAppender: ActivateAppend journals an activation and the events
// that follow it in one transaction, as Activate then Append would; an
// activation appended alone acknowledges nothing and does not wait for an
// fsync (the next synced append covers it). Every SnapshotEvery events the
// folded State is stored, so Load replays only the entries after the latest
// snapshot: inside the append that crossed the multiple, or on a goroutine
// of the journal with JournalOptions.SnapshotInBackground.
//
// MemoryJournal is the same Journal and ActivateAppender kept in process
// memory, for runtimes that are never durable (actors.NewInMemory): the
// same sequence numbers, conflicts, fencing, limits, checks, masking,
// checksummed envelopes and snapshots, with no transaction, no write
// channel and no writer goroutine. Each session has its own lock, so
// appends to different sessions never wait for each other; Delete releases
// a session's entries, and Close every session's. Its Durability is
// DurabilityNone whatever was asked, and nothing survives the process.
//
// # Integrity
//
// Entries are versioned envelopes (messages.Envelope) stored with a CRC-32C
// of their bytes, verified on every read; snapshots carry one too. Read and
// Load also check that the entries follow each other from the first (or the
// snapshot) to the tail without a gap. An entry that fails any check is a
// *CorruptError (wrapping ErrCorrupt) naming the session, the sequence
// number and the problem, and the entries before it stay readable; an entry
// written by a newer version is an *EntryError. A damaged snapshot is
// skipped (and logged): the journal is replayed instead.
//
// Open survives a process killed at any point of an earlier Open or Close,
// verifies every table file before Badger opens it (a damaged one fails Open
// with a *FileError wrapping ErrCorruptStore, naming the file), and reports
// write-ahead logs whose replay would drop bytes (Recoveries). Badger itself
// verifies each table block and value it reads and logs what it cannot read.
//
// Verify checks a whole journal without stopping at the first problem (what
// `agcore doctor` runs), Quarantine moves a damaged journal aside without
// deleting anything, and Store.Backup and Restore copy a store as of one
// moment while it is in use.
//
// # Durability
//
// DurabilitySync fsyncs before Append returns; concurrent appends each
// commit on their own and share the fsyncs (one runs at a time, and those
// who commit meanwhile wait for the next together). DurabilityBatch commits
// the appends that arrive together in one transaction with one fsync
// (group commit); each caller still returns only once its own append is
// durable, at a higher throughput than sync under concurrency.
// DurabilityNone skips the fsync (tests, caches). Store.Close stops the batch committers,
// committing and syncing what they hold, before closing the database.
//
// # History
//
// State is the fold of a journal: History holds user, assistant and tool
// messages (never system prompts), with each assistant message's tool
// results right after it in call order. State.Messages is the view sent to
// providers: it answers every call that never got a result (a crash, a
// cancel) with InterruptedResult, drops orphaned tool messages, and can be
// limited to a sliding window that never starts on a tool message. OpenTurn
// tells a restarted session actor where an interrupted turn stopped.
//
// # Compaction
//
// Threshold, ShouldCompact, Microcompact and SummaryCompact are pure
// functions over messages; State.CompactedEvent turns a Compaction of
// State.History into the messages.Compacted event to journal. A Breaker stops
// compaction after three consecutive failures.
package memory
