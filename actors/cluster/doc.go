// Package cluster runs agcore sessions as protoactor cluster grains, so
// that several processes (members) share the sessions of one journal and
// a session resumes on another member when its member dies.
//
// Every member runs an ordinary actors.Runtime whose journal is shared
// (memory/jetstream), and joins the cluster with Start:
//
//	rt, err := actors.New(actors.Config{Journal: j, SessionMemory: sm, Provider: p, Node: "m1"})
//	if err != nil {
//		return err
//	}
//	m, err := cluster.Start(ctx, cluster.Config{
//		Runtime:    rt,
//		Port:       7001, // the remote endpoint: actor messages
//		HealthPort: 7101, // the membership endpoint the others poll
//		Seeds:      []string{"10.0.0.1:7101", "10.0.0.2:7101", "10.0.0.3:7101"},
//	})
//	if err != nil {
//		return err
//	}
//	defer m.Shutdown(ctx)
//	reply, err := m.Submit(ctx, "s-42", "turn-1", "hello")
//
// Any member, or a client (Start without a Runtime), reaches any session:
// Submit sends the turn to the member that owns the session id, which
// runs it on its runtime.
//
// # Placement and membership
//
// A session is a grain of the kind "session" (Kind) keyed by its id.
// Membership is protoactor's automanaged provider: each member serves
// GET /_health on Config.Host:HealthPort and polls every seed each
// Config.Refresh; a member that does not answer leaves the cluster. With
// Config.Membership (NATSMembership), the members find each other in a
// NATS JetStream key-value bucket instead: each keeps its record under
// its id, refreshed every Config.Refresh and expiring after
// NATSMembership.TTL, deletes it when it shuts down, and watches the
// bucket, so that NATS is the only infrastructure a cluster needs. The
// owner of a session is chosen by rendezvous hashing over the members'
// addresses (protoactor's disthash), so a session moves when a member
// leaves or joins. protoactor's logs go to Config.Logger.
//
// Owner names the member that owns a session id now, without activating
// anything: the same rendezvous hash over the same topology as disthash.
// A member that serves an HTTP API announces its base URL
// (Config.HTTPAddress), which HTTPAddress returns for another member's
// address, so that a request can be forwarded to the session's owner
// (agcore serve --cluster does).
//
// # Requests
//
// Submit, Status and Cancel send one message each through
// cluster.Request, attempt by attempt: each attempt ends after
// Config.Attempt (1 s by default), where protoactor alone would wait 5 s
// for a grain on a member that has died. Submit and Status are retried
// until their context ends: a submission carries the client's turn id, and
// the runtime never runs a journaled turn id twice (a resent submission
// follows the turn or reports how it ended). Cancel is sent once, since a
// second copy could cancel a later turn; an attempt without an answer
// returns ErrOutcomeUnknown.
//
// # Streaming
//
// Stream submits a turn as Submit does and yields the session's journal
// entries as the members running the turn append them, read from the
// shared journal (a Follower, such as *jetstream.Journal) rather than
// forwarded by a member, so that a move to another member loses none.
//
// # Fencing
//
// protoactor does not guarantee a single live copy of a grain: a member
// that was paused (SIGSTOP, a long GC, a network partition) still runs its
// copy when it wakes, after the session has been activated elsewhere.
// Correctness rests on the journal. Every activation appends Activated,
// and the journal refuses any append of an older activation with
// memory.ErrFenced; the session's supervisor then stops that copy, never
// restarts it. Since ToolCallStarted is journaled before a tool runs, a
// fenced copy starts no tool; a tool it started before the fence is the
// case of a crash mid-tool (re-run only if it is idempotent).
//
// # Wire format
//
// Every message between members is one envelope: a type name and the
// message as JSON, carried in google.protobuf.Any (Registry, NewMessages).
// An envelope of a type the receiver does not know decodes to Unknown and
// is answered with UnknownReply; protoactor's receiver would exit the
// process on an unregistered protobuf type, so no other protobuf type of
// agcore's crosses members.
package cluster
