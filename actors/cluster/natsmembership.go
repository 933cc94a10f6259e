package cluster

// This file holds the configuration of membership on a NATS JetStream
// key-value bucket, and the member record each member keeps there.

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
)

// NATSMembership makes the members find each other through a NATS
// JetStream key-value bucket instead of polling each other's membership
// endpoints (Config.Seeds): each member keeps a key there (its id, and
// its member record as the value) that expires TTL after its last
// refresh, and every member and client watches the bucket. NATS, which
// keeps the journal already, is then the only infrastructure a cluster
// needs. Whoever can write the bucket can add members that sessions are
// placed on, so it needs the same trust as the journal's account.
type NATSMembership struct {
	// JetStream is the JetStream context of a connection to the NATS
	// servers. Required.
	JetStream njs.JetStream
	// Bucket is the key-value bucket of the member keys; the members of
	// one cluster must share it. Empty means "agcore_members".
	Bucket string
	// TTL is how long a member's key outlives its last refresh (every
	// Config.Refresh): a member killed without leaving is removed from
	// the topology that long after its last refresh. It is the bucket's
	// MaxAge, so every member must use the same; Start refuses a bucket
	// created with another. Zero means 3 × Config.Refresh; it must be at
	// least 100 ms (the servers' smallest MaxAge) and longer than
	// Config.Refresh.
	TTL time.Duration
	// Replicas is the bucket's replication factor when Start creates it.
	// Zero means 3 when the connected server belongs to a cluster and 1
	// otherwise.
	Replicas int
}

// DefaultMembersBucket is the bucket of the member keys when
// NATSMembership.Bucket is empty.
const DefaultMembersBucket = "agcore_members"

// minMemberTTL is the smallest MaxAge the NATS servers accept on a stream.
const minMemberTTL = 100 * time.Millisecond

// validBucket matches the names the NATS servers accept for a bucket.
var validBucket = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// validKey matches the member ids usable as a key (protoactor's ids are
// base-57 short UUIDs).
var validKey = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// withDefaults returns n with its defaults filled in for a member that
// refreshes every refresh, or an error naming the wrong field.
func (n NATSMembership) withDefaults(refresh time.Duration) (NATSMembership, error) {
	if n.Bucket == "" {
		n.Bucket = DefaultMembersBucket
	}
	if n.TTL == 0 {
		n.TTL = 3 * refresh
	}
	switch {
	case n.JetStream == nil:
		return n, configErr("Membership.JetStream", "nil: NATS membership needs a JetStream context of the NATS servers")
	case !validBucket.MatchString(n.Bucket):
		return n, configErr("Membership.Bucket", "%q is not a bucket name (letters, digits, - and _)", n.Bucket)
	case n.TTL < minMemberTTL:
		return n, configErr("Membership.TTL", "%v is under the servers' smallest MaxAge, %v", n.TTL, minMemberTTL)
	case n.TTL <= refresh:
		return n, configErr("Membership.TTL", "%v does not outlive Refresh (%v): a live member's key would expire between refreshes", n.TTL, refresh)
	case n.Replicas < 0 || n.Replicas > 5:
		return n, configErr("Membership.Replicas", "%d: want 1 to 5 (0 for the default)", n.Replicas)
	}
	return n, nil
}

// memberRecord is the value of a member's key: what protoactor needs to
// place grains on the member, and where it serves its HTTP API.
type memberRecord struct {
	// Cluster is Config.Name of the member; members of other clusters
	// sharing the bucket are ignored.
	Cluster string `json:"cluster"`
	// ID is the member's actor-system id, also its key.
	ID string `json:"id"`
	// Host and Port are the address of its remote endpoint.
	Host string `json:"host"`
	Port int    `json:"port"`
	// Kinds are the grain kinds it hosts.
	Kinds []string `json:"kinds"`
	// HTTP is its Config.HTTPAddress, when it has one.
	HTTP string `json:"http,omitempty"`
}

// errBadRecord is wrapped by every error decodeRecord returns.
var errBadRecord = errors.New("malformed member record")

// maxRecord bounds the size of a member record; a real one is a few
// hundred bytes.
const maxRecord = 16 << 10

// decodeRecord decodes the value of key in the membership bucket, which
// anyone who can write the bucket may have written: it checks every field
// protoactor relies on and returns an error wrapping errBadRecord for a
// value that is not a usable member record.
func decodeRecord(key string, value []byte) (memberRecord, error) {
	var r memberRecord
	if len(value) > maxRecord {
		return r, fmt.Errorf("%w: key %q: %d bytes, over %d", errBadRecord, key, len(value), maxRecord)
	}
	if err := json.Unmarshal(value, &r); err != nil {
		return r, fmt.Errorf("%w: key %q: %v", errBadRecord, key, err)
	}
	switch {
	case r.ID != key:
		return r, fmt.Errorf("%w: key %q holds the record of member %q", errBadRecord, key, r.ID)
	case r.Host == "":
		return r, fmt.Errorf("%w: key %q: no host", errBadRecord, key)
	case r.Port <= 0 || r.Port > 65535:
		return r, fmt.Errorf("%w: key %q: port %d", errBadRecord, key, r.Port)
	case len(r.Kinds) == 0:
		return r, fmt.Errorf("%w: key %q: no kinds", errBadRecord, key)
	}
	for _, k := range r.Kinds {
		if k == "" {
			return r, fmt.Errorf("%w: key %q: an empty kind", errBadRecord, key)
		}
	}
	return r, nil
}
