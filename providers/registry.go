package providers

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Registry errors; test for them with errors.Is.
var (
	// ErrDuplicate is returned by Register for a name already registered.
	ErrDuplicate = errors.New("providers: provider already registered")
	// ErrUnknownProvider is returned for a name nothing is registered under.
	ErrUnknownProvider = errors.New("providers: unknown provider")
	// ErrNoDefault is returned by Resolve for a bare model name when no
	// default provider is set.
	ErrNoDefault = errors.New("providers: no default provider")
	// ErrInvalidName is returned by Register and Replace for an empty name or
	// one that contains '/', which Resolve could never address.
	ErrInvalidName = errors.New("providers: invalid provider name")
)

// Registry holds named providers and resolves "provider/model" strings. It
// is safe for concurrent use. The zero Registry is empty and ready to use.
type Registry struct {
	mu        sync.RWMutex
	providers map[string]Provider
	def       string
}

// Register adds p under name. Registering a name twice is an error
// (ErrDuplicate), so that two pieces of configuration cannot silently
// shadow each other; use Replace to swap a provider on purpose. Register
// does not change the default provider.
func (r *Registry) Register(name string, p Provider) error {
	return r.put(name, p, false)
}

// Replace registers p under name, replacing any provider registered there.
// A default provider registered under name stays the default.
func (r *Registry) Replace(name string, p Provider) error {
	return r.put(name, p, true)
}

func (r *Registry) put(name string, p Provider, replace bool) error {
	if name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("%w: %q (must be non-empty and contain no '/')", ErrInvalidName, name)
	}
	if p == nil {
		return fmt.Errorf("providers: register %q: nil provider", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.providers[name]; ok && !replace {
		return fmt.Errorf("%w: %q", ErrDuplicate, name)
	}
	if r.providers == nil {
		r.providers = make(map[string]Provider)
	}
	r.providers[name] = p
	return nil
}

// Unregister removes the provider registered under name and reports
// whether there was one. Removing the default provider leaves no default.
func (r *Registry) Unregister(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.providers[name]; !ok {
		return false
	}
	delete(r.providers, name)
	if r.def == name {
		r.def = ""
	}
	return true
}

// Get returns the provider registered under name.
func (r *Registry) Get(name string) (Provider, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.providers[name]
	return p, ok
}

// SetDefault makes the provider registered under name the default, the one
// Resolve uses for a bare model name. It fails with ErrUnknownProvider when
// nothing is registered under name.
func (r *Registry) SetDefault(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.providers[name]; !ok {
		return r.unknownLocked(name)
	}
	r.def = name
	return nil
}

// Default returns the default provider and its name, or false when none is
// set.
func (r *Registry) Default() (Provider, string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.def == "" {
		return nil, "", false
	}
	return r.providers[r.def], r.def, true
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.providers))
}

// Resolve splits ref into a provider and a model name:
//   - "name/model" resolves to the provider registered under name and the
//     model "model", which may itself contain '/' ("vllm/meta-llama/Llama-3");
//   - a ref without '/' is a model of the default provider, and "" is the
//     default provider's default model.
//
// An unregistered name fails with an error that wraps ErrUnknownProvider and
// lists the registered names; a bare model without a default fails with
// ErrNoDefault.
func (r *Registry) Resolve(ref string) (Provider, string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	name, model, qualified := strings.Cut(ref, "/")
	if !qualified {
		if r.def == "" {
			return nil, "", fmt.Errorf("resolve %q: %w (registered: %s)", ref, ErrNoDefault, r.namesLocked())
		}
		return r.providers[r.def], ref, nil
	}
	p, ok := r.providers[name]
	if !ok {
		return nil, "", fmt.Errorf("resolve %q: %w", ref, r.unknownLocked(name))
	}
	return p, model, nil
}

func (r *Registry) unknownLocked(name string) error {
	return fmt.Errorf("%w %q (registered: %s)", ErrUnknownProvider, name, r.namesLocked())
}

func (r *Registry) namesLocked() string {
	if len(r.providers) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(r.providers)), ", ")
}
