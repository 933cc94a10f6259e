package providers_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/providers"
)

func TestRegistry(t *testing.T) {
	var r providers.Registry
	a, b := &flaky{}, &flaky{}
	if _, _, ok := r.Default(); ok {
		t.Fatal("empty registry has a default")
	}
	if err := r.Register("openai", a); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("openai", b); !errors.Is(err, providers.ErrDuplicate) {
		t.Errorf("duplicate Register err = %v, want ErrDuplicate", err)
	}
	if p, _ := r.Get("openai"); p != a {
		t.Error("duplicate Register replaced the provider")
	}
	if err := r.Replace("openai", b); err != nil {
		t.Fatal(err)
	}
	if p, _ := r.Get("openai"); p != b {
		t.Error("Replace did not replace")
	}
	if err := r.Register("local", a); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "a/b"} {
		if err := r.Register(bad, a); !errors.Is(err, providers.ErrInvalidName) {
			t.Errorf("Register(%q) err = %v, want ErrInvalidName", bad, err)
		}
	}
	if err := r.Register("nil", nil); err == nil {
		t.Error("Register of a nil provider succeeded")
	}
	if _, _, ok := r.Default(); ok {
		t.Error("Register set a default")
	}
	if err := r.SetDefault("nope"); !errors.Is(err, providers.ErrUnknownProvider) {
		t.Errorf("SetDefault(nope) err = %v, want ErrUnknownProvider", err)
	}
	if err := r.SetDefault("openai"); err != nil {
		t.Fatal(err)
	}
	if p, name, ok := r.Default(); p != b || name != "openai" || !ok {
		t.Errorf("Default = %v, %q, %v", p, name, ok)
	}
	if got := fmt.Sprint(r.Names()); got != "[local openai]" {
		t.Errorf("Names = %s", got)
	}
	if !r.Unregister("openai") || r.Unregister("openai") {
		t.Error("Unregister did not report removal once")
	}
	if _, _, ok := r.Default(); ok {
		t.Error("unregistering the default left a default")
	}
	if _, ok := r.Get("openai"); ok {
		t.Error("Get after Unregister found the provider")
	}
}

func TestRegistry_Resolve(t *testing.T) {
	var r providers.Registry
	a, b := &flaky{}, &flaky{}
	_ = r.Register("openai", a)
	_ = r.Register("vllm", b)

	if _, _, err := r.Resolve("gpt-4o"); !errors.Is(err, providers.ErrNoDefault) {
		t.Errorf("bare model without default: err = %v, want ErrNoDefault", err)
	}
	_ = r.SetDefault("openai")

	tests := []struct {
		ref   string
		p     providers.Provider
		model string
	}{
		{"gpt-4o", a, "gpt-4o"},
		{"", a, ""},
		{"openai/gpt-4o-mini", a, "gpt-4o-mini"},
		{"vllm/meta-llama/Llama-3-8B", b, "meta-llama/Llama-3-8B"},
		{"vllm/", b, ""},
	}
	for _, tt := range tests {
		p, model, err := r.Resolve(tt.ref)
		if err != nil || p != tt.p || model != tt.model {
			t.Errorf("Resolve(%q) = %p, %q, %v; want %p, %q", tt.ref, p, model, err, tt.p, tt.model)
		}
	}

	_, _, err := r.Resolve("anthropic/claude")
	if !errors.Is(err, providers.ErrUnknownProvider) {
		t.Fatalf("err = %v, want ErrUnknownProvider", err)
	}
	for _, want := range []string{`"anthropic"`, "openai, vllm"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestRegistry_Concurrent(t *testing.T) {
	var r providers.Registry
	_ = r.Register("base", &flaky{})
	_ = r.SetDefault("base")
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			name := fmt.Sprintf("p%d", i)
			if err := r.Register(name, &flaky{}); err != nil {
				t.Error(err)
			}
			if _, m, err := r.Resolve(name + "/m"); err != nil || m != "m" {
				t.Error(m, err)
			}
			if _, _, err := r.Resolve("bare"); err != nil {
				t.Error(err)
			}
			r.Names()
		})
	}
	wg.Wait()
	if n := len(r.Names()); n != 51 {
		t.Errorf("%d names, want 51", n)
	}
}
