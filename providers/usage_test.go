package providers_test

import (
	"sync"
	"testing"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/google/go-cmp/cmp"
)

// The Tracker has the method set of toolsys.CostTracker.
var _ interface {
	Record(model string, usage messages.Usage) float64
} = (*providers.Tracker)(nil)

var prices = providers.PriceTable{
	"gpt-4o":      {InputPerMillion: 2.5, CachedInputPerMillion: 1.25, OutputPerMillion: 10},
	"gpt-4o-mini": {InputPerMillion: 0.15, CachedInputPerMillion: 0.075, OutputPerMillion: 0.6},
	"gpt-4":       {InputPerMillion: 30, OutputPerMillion: 60},
}

func TestPriceTable_Lookup(t *testing.T) {
	tests := []struct {
		model string
		want  float64 // InputPerMillion of the match
		ok    bool
	}{
		{"gpt-4o", 2.5, true},
		{"gpt-4o-2024-08-06", 2.5, true},
		{"gpt-4o-mini", 0.15, true},
		{"gpt-4o-mini-2024-07-18", 0.15, true},
		{"gpt-4-turbo", 30, true},
		{"claude", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		p, ok := prices.Lookup(tt.model)
		if p.InputPerMillion != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%q) = %v, %v; want input %v, %v", tt.model, p, ok, tt.want, tt.ok)
		}
	}
}

func TestPrice_Cost(t *testing.T) {
	p := providers.Price{InputPerMillion: 2, CachedInputPerMillion: 1, OutputPerMillion: 8}
	tests := []struct {
		name string
		u    messages.Usage
		want float64
	}{
		{"zero", messages.Usage{}, 0},
		{"no cache", messages.Usage{PromptTokens: 1_000_000, CompletionTokens: 500_000}, 2 + 4},
		{"half cached", messages.Usage{PromptTokens: 1_000_000, CachedPromptTokens: 500_000, CompletionTokens: 0}, 1 + 0.5},
		{"cached beyond prompt is clamped", messages.Usage{PromptTokens: 1_000_000, CachedPromptTokens: 3_000_000}, 1},
		{"negative counts ignored", messages.Usage{PromptTokens: -5, CompletionTokens: -5}, 0},
	}
	for _, tt := range tests {
		if got := p.Cost(tt.u); got != tt.want {
			t.Errorf("%s: Cost = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTracker_Record(t *testing.T) {
	tr := providers.NewTracker(prices)
	u := messages.Usage{PromptTokens: 1000, CompletionTokens: 200, TotalTokens: 1200, CachedPromptTokens: 400, ReasoningTokens: 50}
	got := tr.Record("gpt-4o-2024-08-06", u)
	want := (600*2.5 + 400*1.25 + 200*10) / 1e6
	if got != want {
		t.Errorf("Record cost = %v, want %v", got, want)
	}
	if c := tr.Record("unpriced", u); c != 0 {
		t.Errorf("unpriced model cost %v, want 0", c)
	}
	snap := tr.Snapshot()
	wantSnap := providers.UsageSnapshot{
		Models: map[string]providers.ModelUsage{
			"gpt-4o-2024-08-06": {Calls: 1, Usage: u, Cost: want},
			"unpriced":          {Calls: 1, Usage: u},
		},
		Usage: u.Add(u),
		Cost:  want,
	}
	if d := cmp.Diff(wantSnap, snap); d != "" {
		t.Errorf("Snapshot (-want +got):\n%s", d)
	}
	if m := tr.Model("gpt-4o-2024-08-06"); m.Calls != 1 || m.Cost != want {
		t.Errorf("Model = %+v", m)
	}
	if m := tr.Model("never"); m != (providers.ModelUsage{}) {
		t.Errorf("Model(never) = %+v, want zero", m)
	}
	tr.Reset()
	if u, c := tr.Total(); !u.IsZero() || c != 0 {
		t.Errorf("after Reset Total = %v, %v", u, c)
	}
}

func TestTracker_ZeroValue(t *testing.T) {
	var tr providers.Tracker
	if c := tr.Record("m", messages.Usage{PromptTokens: 10}); c != 0 {
		t.Errorf("zero Tracker cost = %v", c)
	}
	if u, _ := tr.Total(); u.PromptTokens != 10 {
		t.Errorf("zero Tracker total = %v", u)
	}
}

func TestTracker_TableIsCopied(t *testing.T) {
	table := providers.PriceTable{"m": {InputPerMillion: 1}}
	tr := providers.NewTracker(table)
	table["m"] = providers.Price{InputPerMillion: 1000}
	if c := tr.Record("m", messages.Usage{PromptTokens: 1_000_000}); c != 1 {
		t.Errorf("cost = %v, want 1 (the price at construction)", c)
	}
}

// TestTracker_Concurrent records from 100 goroutines; run it with -race.
// The totals are exact, and the cost equals the cost of the totals.
func TestTracker_Concurrent(t *testing.T) {
	const goroutines, calls = 100, 50
	tr := providers.NewTracker(prices)
	models := []string{"gpt-4o", "gpt-4o-mini", "gpt-4-0613", "local"}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				tr.Record(models[(g+i)%len(models)], messages.Usage{
					PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110, CachedPromptTokens: 30, ReasoningTokens: 1,
				})
			}
		})
	}
	wg.Wait()
	const n = goroutines * calls
	usage, cost := tr.Total()
	want := messages.Usage{PromptTokens: 100 * n, CompletionTokens: 10 * n, TotalTokens: 110 * n, CachedPromptTokens: 30 * n, ReasoningTokens: n}
	if usage != want {
		t.Errorf("Total usage = %+v, want %+v", usage, want)
	}
	var wantCost float64
	var calls64 int64
	for _, m := range []string{"gpt-4-0613", "gpt-4o", "gpt-4o-mini", "local"} {
		mu := tr.Model(m)
		calls64 += mu.Calls
		if mu.Calls != n/int64(len(models)) {
			t.Errorf("%s calls = %d, want %d", m, mu.Calls, n/len(models))
		}
		wantCost += tr.Price(m).Cost(mu.Usage)
	}
	if cost != wantCost || calls64 != n {
		t.Errorf("Total cost = %v over %d calls, want %v over %d", cost, calls64, wantCost, n)
	}
	// 1250 calls each: gpt-4o 0.390625 + gpt-4o-mini 0.0234375 + gpt-4 3.375.
	if cost != 3.7890625 {
		t.Errorf("cost = %v, want 3.7890625", cost)
	}
}
