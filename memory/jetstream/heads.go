package jetstream

import "sync"

// head is what the journal knows of a session's last record.
type head struct {
	last       uint64 // seq of the session's last entry; 0 when empty
	activation uint64 // the session's current activation
	streamSeq  uint64 // stream sequence of the last record; 0 when empty
	msgID      string // the last record's Nats-Msg-Id
}

// maxCachedHeads bounds the heads a journal remembers.
const maxCachedHeads = 1 << 16

// heads caches the last head each session's writes saw. A cached head is
// only ever used to attempt a compare-and-append: the servers refuse it
// when it is stale, and every refusal reported to a caller (ErrConflict,
// ErrFenced) is decided on a head read from the servers.
type heads struct {
	mu sync.Mutex
	m  map[string]head
}

func (c *heads) get(session string) (head, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.m[session]
	return h, ok
}

func (c *heads) set(session string, h head) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]head)
	}
	if _, ok := c.m[session]; !ok && len(c.m) >= maxCachedHeads {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[session] = h
}

func (c *heads) forget(session string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, session)
}
