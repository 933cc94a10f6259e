package providers

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/agcore/agcore/messages"
)

// Price is what a model costs, in currency units per million tokens.
type Price struct {
	// InputPerMillion prices prompt tokens that were not served from cache.
	InputPerMillion float64 `json:"input_per_million" yaml:"input_per_million"`
	// CachedInputPerMillion prices prompt tokens served from the provider's
	// prompt cache.
	CachedInputPerMillion float64 `json:"cached_input_per_million" yaml:"cached_input_per_million"`
	// OutputPerMillion prices completion tokens (reasoning included).
	OutputPerMillion float64 `json:"output_per_million" yaml:"output_per_million"`
}

// Cost returns the cost of u at price p:
// ((prompt − cached)·input + cached·cachedInput + completion·output) / 10⁶.
// Cached tokens beyond the prompt tokens are not counted.
func (p Price) Cost(u messages.Usage) float64 {
	cached := min(max(u.CachedPromptTokens, 0), max(u.PromptTokens, 0))
	uncached := max(u.PromptTokens, 0) - cached
	return (float64(uncached)*p.InputPerMillion +
		float64(cached)*p.CachedInputPerMillion +
		float64(max(u.CompletionTokens, 0))*p.OutputPerMillion) / 1e6
}

// PriceTable maps model names, or model name prefixes, to prices.
type PriceTable map[string]Price

// Lookup returns the price of model: the entry named exactly model, else
// the entry with the longest key that is a prefix of model (so "gpt-4o"
// prices "gpt-4o-2024-08-06"). It reports false when none matches.
func (t PriceTable) Lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	best, found := "", false
	for k := range t {
		if strings.HasPrefix(model, k) && (!found || len(k) > len(best) || len(k) == len(best) && k < best) {
			best, found = k, true
		}
	}
	if !found {
		return Price{}, false
	}
	return t[best], true
}

// ModelUsage is what the calls to one model used and cost.
type ModelUsage struct {
	Calls int64          `json:"calls"`
	Usage messages.Usage `json:"usage"`
	Cost  float64        `json:"cost"`
}

// UsageSnapshot is a Tracker's state at one moment.
type UsageSnapshot struct {
	// Models holds the totals of each model that was recorded.
	Models map[string]ModelUsage `json:"models"`
	// Usage and Cost are the totals over all models.
	Usage messages.Usage `json:"usage"`
	Cost  float64        `json:"cost"`
}

// Tracker accumulates token usage and cost per model. It is safe for
// concurrent use. The zero Tracker is ready to use and prices nothing
// (every cost is 0); NewTracker gives it a price table.
//
// Costs are computed from the integer token totals of each model when they
// are read, so the totals are exact and do not depend on the order in which
// goroutines recorded their calls.
type Tracker struct {
	prices PriceTable

	mu     sync.Mutex
	models map[string]*tally
}

type tally struct {
	calls int64
	usage messages.Usage
}

// NewTracker returns a Tracker that prices usage with prices. The table is
// copied; later changes to it are not seen.
func NewTracker(prices PriceTable) *Tracker {
	return &Tracker{prices: maps.Clone(prices)}
}

// Price returns the price the tracker applies to model (zero when the
// table has none).
func (t *Tracker) Price(model string) Price {
	p, _ := t.prices.Lookup(model)
	return p
}

// Record adds one call's usage for model and returns that call's cost. Its
// signature matches toolsys.CostTracker.
func (t *Tracker) Record(model string, usage messages.Usage) float64 {
	// Clamp so that the per-call costs add up exactly to the cost of the
	// totals, which is what the read methods report.
	usage.CachedPromptTokens = min(max(usage.CachedPromptTokens, 0), max(usage.PromptTokens, 0))
	t.mu.Lock()
	if t.models == nil {
		t.models = make(map[string]*tally)
	}
	m := t.models[model]
	if m == nil {
		m = &tally{}
		t.models[model] = m
	}
	m.calls++
	m.usage = m.usage.Add(usage)
	t.mu.Unlock()
	return t.Price(model).Cost(usage)
}

// Model returns the totals recorded for model.
func (t *Tracker) Model(model string) ModelUsage {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.models[model]
	if m == nil {
		return ModelUsage{}
	}
	return ModelUsage{Calls: m.calls, Usage: m.usage, Cost: t.Price(model).Cost(m.usage)}
}

// Total returns the usage and cost summed over all models.
func (t *Tracker) Total() (messages.Usage, float64) {
	s := t.Snapshot()
	return s.Usage, s.Cost
}

// Snapshot returns the per-model and overall totals.
func (t *Tracker) Snapshot() UsageSnapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := UsageSnapshot{Models: make(map[string]ModelUsage, len(t.models))}
	// Sum in a fixed order so that the float total is reproducible.
	for _, name := range slices.Sorted(maps.Keys(t.models)) {
		m := t.models[name]
		mu := ModelUsage{Calls: m.calls, Usage: m.usage, Cost: t.Price(name).Cost(m.usage)}
		s.Models[name] = mu
		s.Usage = s.Usage.Add(mu.Usage)
		s.Cost += mu.Cost
	}
	return s
}

// Reset forgets everything recorded.
func (t *Tracker) Reset() {
	t.mu.Lock()
	t.models = nil
	t.mu.Unlock()
}
