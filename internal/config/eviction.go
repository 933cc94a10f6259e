package config

import (
	"time"

	"github.com/agcore/agcore/memory/knowledge"
)

// The knowledge eviction policies.
const (
	// EvictNone keeps every page (the default).
	EvictNone = "none"
	// EvictTTL drops a page ttl after it was created.
	EvictTTL = "ttl"
	// EvictCapacity keeps the max_pages newest pages.
	EvictCapacity = "capacity"
	// EvictRecall keeps the max_pages pages of highest recall value (how
	// often and how well they were retrieved, and how recently).
	EvictRecall = "recall"
)

// KnowledgeEviction bounds the pages of the knowledge base, whoever writes
// them: `agcore knowledge add`, the memory tools, an embedding program.
// The runtime and `agcore knowledge add` apply it to the page writes they
// make (an eviction pass every check_interval writes).
type KnowledgeEviction struct {
	// Policy is "none" (the default: knowledge accumulates), "ttl",
	// "capacity" or "recall".
	Policy string `yaml:"policy"`
	// TTL is the life of a page under the ttl policy; required there.
	TTL time.Duration `yaml:"ttl"`
	// MaxPages is the number of pages kept under capacity and recall;
	// required there.
	MaxPages int `yaml:"max_pages"`
	// HalfLife is how fast recall value fades under recall. Zero means 7
	// days.
	HalfLife time.Duration `yaml:"half_life"`
	// CheckInterval is the number of page writes between eviction
	// passes. Zero means 64.
	CheckInterval int `yaml:"check_interval"`
}

// validateEviction checks knowledge.eviction.
func validateEviction(ps *problems, e KnowledgeEviction) {
	const key = "knowledge.eviction."
	switch e.Policy {
	case "", EvictNone:
	case EvictTTL:
		if e.TTL <= 0 {
			ps.add(key+"ttl", "must be positive for the ttl policy, got %v", e.TTL)
		}
	case EvictCapacity, EvictRecall:
		if e.MaxPages <= 0 {
			ps.add(key+"max_pages", "must be positive for the %s policy, got %d", e.Policy, e.MaxPages)
		}
	default:
		ps.add(key+"policy", "unknown policy %q (known: none, ttl, capacity, recall)", e.Policy)
	}
	if e.HalfLife < 0 {
		ps.add(key+"half_life", "must not be negative, got %v", e.HalfLife)
	}
	if e.CheckInterval < 0 {
		ps.add(key+"check_interval", "must not be negative, got %d", e.CheckInterval)
	}
}

// KnowledgePolicy returns the policy as the knowledge package takes it,
// for every writer of the data directory's knowledge base.
func (e KnowledgeEviction) KnowledgePolicy() knowledge.Policy {
	p := knowledge.Policy{TTL: e.TTL, MaxPages: e.MaxPages, HalfLife: e.HalfLife, CheckInterval: e.CheckInterval}
	switch e.Policy {
	case EvictTTL:
		p.Kind = knowledge.EvictTTL
	case EvictCapacity:
		p.Kind = knowledge.EvictCapacity
	case EvictRecall:
		p.Kind = knowledge.EvictRecallBased
	}
	return p
}
