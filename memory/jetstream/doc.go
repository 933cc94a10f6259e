// Package jetstream keeps agcore's session journal in NATS JetStream
// streams, replicated by the servers' Raft groups, behind the same
// memory.Journal contract as the Badger journal: several processes (the
// members of a cluster) can share it, and a session can resume on any of
// them.
//
//	nc, err := nats.Connect("nats://n1:4222,nats://n2:4222,nats://n3:4222", nats.MaxReconnects(-1))
//	if err != nil {
//		return err
//	}
//	defer nc.Close()
//	j, err := jetstream.New(ctx, jetstream.Config{
//		Conn:    nc,
//		Streams: 3, // sessions hashed over 3 streams, each replicated 3 times
//		Options: memory.JournalOptions{Durability: memory.DurabilitySync},
//	})
//	if err != nil {
//		return err
//	}
//	act, tail, err := j.Activate(ctx, "s1", "member-a") // fences every older activation
//	if err != nil {
//		return err
//	}
//	tail, err = j.Append(ctx, "s1", act, tail, messages.UserMessage{TurnID: "t-1", Message: messages.UserText("hi")})
//	if errors.Is(err, memory.ErrFenced) {
//		return err // another member activated the session: stop, never retry
//	}
//
// The journal is handed to the runtime as actors.Config.Journal; the session
// key-value memory has its own replicated home, SessionMemory, handed as
// actors.Config.SessionMemory.
//
// # Layout
//
// Stream i of Config.Streams is "<Stream>_<i>" with the subjects
// "<Subject>.<i>.e.*" (entries) and "<Subject>.<i>.s.*" (snapshots); a
// session goes to stream FNV-1a(id) mod Streams, on the subject token
// base64url(id). Each Append (and Activate) is one record: one message whose
// headers give its first and last seq and the session's activation, and
// whose body is the entries' envelopes, each exactly as the Badger journal
// stores it (versioned JSON ending with a CRC-32C), each preceded by its
// length. One message per append makes an append all-or-nothing.
//
// # Compare-and-append and fencing
//
// A record is published with Nats-Expected-Last-Subject-Sequence set to the
// stream sequence of the session's last record, as this journal last saw
// it: the stream's leader stores it only if no other record came in
// between. A refusal is classified on the session's last record read from
// the leader: memory.ErrFenced when the writer's activation is no longer the
// current one (Activate appends messages.Activated on top of the last record
// with the same check, so every older activation's next append is refused),
// memory.ErrConflict when the tail is not the expected one. A fenced append
// is never retried.
//
// # Resending without storing twice
//
// Every record carries a Nats-Msg-Id made of the session, the writer's
// activation, the first seq and a random nonce. An attempt left without an
// answer (a leader that died, an election under way, a reconnect) is resent
// with the same id and the same expected sequence until the caller's
// context ends. The leader of a replicated stream recognises an id it
// stored within Config.Duplicates and answers with the sequence it got,
// before checking the expected sequence; the leader of a one-replica
// stream checks the expected sequence first and refuses the resend, and
// the journal then finds the id on the session's last record. Either way
// the record is stored once and the append succeeds. When the context ends
// first, Append returns memory.ErrOutcomeUnknown.
//
// # Integrity
//
// Read and Load check each entry's checksum and that the seqs follow each
// other from the first entry (or the snapshot) to the last record's, and
// report damage as *memory.CorruptError, an entry of a newer version as
// *memory.EntryError, as the Badger journal does. Snapshots carry a CRC-32C
// of their State and the stream sequence of the record they end at; a
// damaged one is skipped and the journal replayed.
//
// # Durability
//
// DurabilitySync and DurabilityBatch use file storage replicated
// Config.Replicas times: an append returns once a quorum stored it.
// DurabilitySync also needs every server to fsync each write
// (`sync_interval: always` in the server's configuration, which a client
// can neither set nor see); DurabilityBatch relies on the servers' periodic
// fsync (every 2 minutes by default), so acknowledged records can be lost
// if a quorum of servers loses power at once. DurabilityNone uses memory
// storage with one replica.
//
// The package natstest runs servers inside a test (or as child processes of
// the test binary, to kill one) on 127.0.0.1.
package jetstream
