package providers_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

func ExampleRegistry_Resolve() {
	var r providers.Registry
	_ = r.Register("openai", &flaky{})
	_ = r.Register("local", &flaky{})
	_ = r.SetDefault("openai")

	_, model, _ := r.Resolve("local/llama-3.1-8b")
	fmt.Println(model)
	_, model, _ = r.Resolve("gpt-4o")
	fmt.Println(model)
	_, _, err := r.Resolve("anthropic/claude")
	fmt.Println(errors.Is(err, providers.ErrUnknownProvider), err)
	// Output:
	// llama-3.1-8b
	// gpt-4o
	// true resolve "anthropic/claude": providers: unknown provider "anthropic" (registered: local, openai)
}

func ExampleTracker() {
	t := providers.NewTracker(providers.PriceTable{
		"gpt-4o": {InputPerMillion: 2.5, CachedInputPerMillion: 1.25, OutputPerMillion: 10},
	})
	cost := t.Record("gpt-4o-2024-08-06", messages.Usage{
		PromptTokens: 10_000, CachedPromptTokens: 4_000, CompletionTokens: 1_000, TotalTokens: 11_000,
	})
	usage, total := t.Total()
	fmt.Printf("call $%.4f, total $%.4f over %d tokens\n", cost, total, usage.TotalTokens)
	// Output: call $0.0300, total $0.0300 over 11000 tokens
}

func ExampleRetryPolicy_Do() {
	calls := 0
	policy := providers.RetryPolicy{
		// Record the waits instead of sleeping; no jitter.
		Sleep: func(ctx context.Context, d time.Duration) error { fmt.Println("wait", d); return nil },
		Rand:  func() float64 { return 0 },
	}
	err := policy.Do(context.Background(), func(context.Context) error {
		calls++
		if calls < 3 {
			return &providers.Error{Kind: providers.KindServer, Status: 503}
		}
		return nil
	})
	fmt.Println(calls, err)
	// Output:
	// wait 1s
	// wait 2s
	// 3 <nil>
}
