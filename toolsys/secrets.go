package toolsys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Secret placeholders. A model never sees a secret: it writes
// <secret_ref:NAME> in a parameter the tool declares in SecretParams, and the
// registry replaces it with the value from a SecretStore just before the
// tool runs. Values are scrubbed back to placeholders in what the tool
// returns.

// ErrUnknownSecret is returned (wrapped in a *SecretError) when a
// placeholder names a secret the store does not have.
var ErrUnknownSecret = errors.New("unknown secret")

// ErrSecretNotAllowed is returned (wrapped in a *SecretError) when a
// placeholder appears in a parameter the tool did not declare as
// secret-eligible.
var ErrSecretNotAllowed = errors.New("secret placeholders are not allowed in this field")

// ErrMalformedSecretRef is returned (wrapped in a *SecretError) for text that
// starts like a placeholder but is not one.
var ErrMalformedSecretRef = errors.New("malformed secret placeholder")

// SecretError says which field and which secret a substitution failed on.
// It never carries a secret's value.
type SecretError struct {
	// Field is the path of the argument ("env.TOKEN", "args[1]").
	Field string
	// Secret is the placeholder's name, when known.
	Secret string
	// Allowed lists the tool's secret-eligible parameters, for
	// ErrSecretNotAllowed.
	Allowed []string
	Err     error
}

// Error implements error.
func (e *SecretError) Error() string {
	switch {
	case errors.Is(e.Err, ErrSecretNotAllowed) && len(e.Allowed) == 0:
		return fmt.Sprintf("field %q: %v (this tool accepts no secrets)", e.Field, e.Err)
	case errors.Is(e.Err, ErrSecretNotAllowed):
		return fmt.Sprintf("field %q: %v (only in %s)", e.Field, e.Err, quoteList(e.Allowed))
	case e.Secret != "":
		return fmt.Sprintf("field %q: %v %q", e.Field, e.Err, e.Secret)
	}
	return fmt.Sprintf("field %q: %v", e.Field, e.Err)
}

// Unwrap returns the underlying error.
func (e *SecretError) Unwrap() error { return e.Err }

// SecretStore looks secrets up by name. Implementations must be safe for
// concurrent use.
type SecretStore interface {
	Lookup(name string) (value string, ok bool)
}

// SecretLister is implemented by a SecretStore that can enumerate its
// secrets, so that a Scrubber can remove every known value from output, not
// only the values a call used.
type SecretLister interface {
	Secrets() map[string]string
}

// DefaultSecretEnvPrefix is the environment prefix EnvSecrets uses when its
// Prefix is empty.
const DefaultSecretEnvPrefix = "AGCORE_SECRET_"

// EnvSecrets reads secrets from environment variables: the secret NAME is
// the variable Prefix+NAME. The zero value uses DefaultSecretEnvPrefix, so
// that a model cannot read arbitrary variables such as HOME or PATH.
type EnvSecrets struct {
	// Prefix is prepended to a secret's name. Empty means
	// DefaultSecretEnvPrefix.
	Prefix string
}

func (e EnvSecrets) prefix() string {
	if e.Prefix == "" {
		return DefaultSecretEnvPrefix
	}
	return e.Prefix
}

// Lookup returns the variable Prefix+name.
func (e EnvSecrets) Lookup(name string) (string, bool) {
	return os.LookupEnv(e.prefix() + name)
}

// Secrets returns every variable with the prefix, keyed by the name without
// it.
func (e EnvSecrets) Secrets() map[string]string {
	p := e.prefix()
	out := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, p) && len(k) > len(p) {
			out[k[len(p):]] = v
		}
	}
	return out
}

// MapSecrets is a fixed set of secrets, for tests and embedding programs.
type MapSecrets map[string]string

// Lookup returns m[name].
func (m MapSecrets) Lookup(name string) (string, bool) {
	v, ok := m[name]
	return v, ok
}

// Secrets returns a copy of m.
func (m MapSecrets) Secrets() map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

const (
	secretRefOpen = "<secret_ref:"
	maxSecretName = 128
)

// SecretRef is one placeholder found in a string.
type SecretRef struct {
	Name       string
	Start, End int // byte offsets of the whole placeholder in the string
}

// ParseSecretRefs finds the <secret_ref:NAME> placeholders in s. A name is 1
// to 128 characters from [A-Za-z0-9_.-]. Text that starts with
// "<secret_ref:" but is not a complete, well-formed placeholder is an error
// wrapping ErrMalformedSecretRef, so an intended secret is never passed on
// literally.
func ParseSecretRefs(s string) ([]SecretRef, error) {
	var refs []SecretRef
	for off := 0; ; {
		i := strings.Index(s[off:], secretRefOpen)
		if i < 0 {
			return refs, nil
		}
		start := off + i
		nameStart := start + len(secretRefOpen)
		end := nameStart
		for end < len(s) && end-nameStart <= maxSecretName && isSecretNameByte(s[end]) {
			end++
		}
		if end == nameStart || end-nameStart > maxSecretName || end >= len(s) || s[end] != '>' {
			return nil, fmt.Errorf("%w at offset %d", ErrMalformedSecretRef, start)
		}
		refs = append(refs, SecretRef{Name: s[nameStart:end], Start: start, End: end + 1})
		off = end + 1
	}
}

func isSecretNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// SecretPlaceholder returns the placeholder for a secret name.
func SecretPlaceholder(name string) string { return secretRefOpen + name + ">" }

// SubstituteSecrets replaces the placeholders in the top-level parameters
// named in params (in their strings, and in the strings of arrays and
// objects under them) with values from store. A placeholder in any other
// field, a malformed one, or one naming an unknown secret is a *SecretError
// naming the field (and the secret, never its value). It returns the new
// arguments (raw itself when there was nothing to replace) and the secrets
// used, name to value, for scrubbing.
func SubstituteSecrets(raw json.RawMessage, params []string, store SecretStore) (json.RawMessage, map[string]string, error) {
	// Fast path: without the marker (or a JSON escape that could hide it)
	// there is nothing to do.
	if !bytes.Contains(raw, []byte("secret_ref")) && !bytes.Contains(raw, []byte(`\u`)) {
		return raw, nil, nil
	}
	doc, err := parseArguments(raw)
	if err != nil {
		return nil, nil, err
	}
	s := &substituter{store: store, params: params}
	for k, v := range doc {
		if slices.Contains(params, k) {
			if doc[k], err = s.replace(v, k); err != nil {
				return nil, nil, err
			}
		} else if err := s.forbid(v, k); err != nil {
			return nil, nil, err
		}
	}
	if len(s.used) == 0 {
		return raw, nil, nil
	}
	out, err := marshalSorted(doc)
	if err != nil {
		return nil, nil, err
	}
	return out, s.used, nil
}

type substituter struct {
	store  SecretStore
	params []string
	used   map[string]string
}

// replace substitutes placeholders in v's strings.
func (s *substituter) replace(v any, field string) (any, error) {
	switch v := v.(type) {
	case string:
		refs, err := ParseSecretRefs(v)
		if err != nil {
			return nil, &SecretError{Field: field, Err: err}
		}
		if len(refs) == 0 {
			return v, nil
		}
		var sb strings.Builder
		last := 0
		for _, r := range refs {
			var val string
			ok := false
			if s.store != nil {
				val, ok = s.store.Lookup(r.Name)
			}
			if !ok {
				return nil, &SecretError{Field: field, Secret: r.Name, Err: ErrUnknownSecret}
			}
			if s.used == nil {
				s.used = map[string]string{}
			}
			s.used[r.Name] = val
			sb.WriteString(v[last:r.Start])
			sb.WriteString(val)
			last = r.End
		}
		sb.WriteString(v[last:])
		return sb.String(), nil
	case []any:
		for i, e := range v {
			ne, err := s.replace(e, fmt.Sprintf("%s[%d]", field, i))
			if err != nil {
				return nil, err
			}
			v[i] = ne
		}
	case map[string]any:
		for k, e := range v {
			if strings.Contains(k, secretRefOpen) {
				return nil, &SecretError{Field: field + "." + k, Allowed: s.params, Err: ErrSecretNotAllowed}
			}
			ne, err := s.replace(e, field+"."+k)
			if err != nil {
				return nil, err
			}
			v[k] = ne
		}
	}
	return v, nil
}

// forbid rejects any placeholder in v.
func (s *substituter) forbid(v any, field string) error {
	switch v := v.(type) {
	case string:
		if strings.Contains(v, secretRefOpen) {
			return &SecretError{Field: field, Allowed: s.params, Err: ErrSecretNotAllowed}
		}
	case []any:
		for i, e := range v {
			if err := s.forbid(e, fmt.Sprintf("%s[%d]", field, i)); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.Contains(k, secretRefOpen) {
				return &SecretError{Field: field + "." + k, Allowed: s.params, Err: ErrSecretNotAllowed}
			}
			if err := s.forbid(e, field+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}
