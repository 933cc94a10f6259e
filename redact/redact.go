package redact

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// MinLength is the shortest value [Redactor.Add] accepts: shorter values
// would match ordinary text everywhere.
const MinLength = 4

// Redactor masks credentials in text (see the package documentation for
// what it recognises). Values added with [Redactor.Add] are replaced
// wherever they appear. A nil *Redactor masks by shape only. A Redactor is
// safe for concurrent use; adding values while others redact is allowed.
type Redactor struct {
	mu    sync.Mutex        // serialises Add
	known map[string]string // value (and its encoded forms) -> replacement; guarded by mu
	set   atomic.Pointer[knownSet]
}

// knownSet is an immutable snapshot of the known values, rebuilt on Add.
type knownSet struct {
	values   []string // longest first
	replacer *strings.Replacer
	// pairs has the bit of the first two bytes of every value, and
	// byFirst the values by their first byte, so that finding whether a
	// text holds one costs about one look-up per byte.
	pairs   [1 << 16 / 64]uint64
	byFirst [256][]string
}

// New returns a Redactor that knows no values yet.
func New() *Redactor { return &Redactor{known: map[string]string{}} }

// Add makes r replace value, and its JSON-escaped and URL-encoded forms,
// with replacement ([Mask] when replacement is empty). Values shorter than
// [MinLength] are ignored. Adding a value again with another replacement
// changes it.
func (r *Redactor) Add(value, replacement string) {
	if r == nil || len(value) < MinLength {
		return
	}
	if replacement == "" {
		replacement = Mask
	}
	forms := encodedForms(value)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.known == nil {
		r.known = map[string]string{}
	}
	changed := false
	for _, f := range forms {
		if r.known[f] != replacement {
			r.known[f] = replacement
			changed = true
		}
	}
	if changed {
		r.set.Store(newKnownSet(r.known))
	}
}

// encodedForms returns value and the other spellings it takes in the text
// the process writes: JSON-escaped and URL-encoded.
func encodedForms(value string) []string {
	forms := []string{value}
	if b, err := json.Marshal(value); err == nil {
		forms = append(forms, string(b[1:len(b)-1]))
	}
	forms = append(forms, url.QueryEscape(value), url.PathEscape(value))
	slices.Sort(forms)
	return slices.Compact(forms)
}

func newKnownSet(known map[string]string) *knownSet {
	values := slices.Collect(maps.Keys(known))
	// Longer values first, so that a value containing another is replaced whole.
	slices.SortFunc(values, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	ks := &knownSet{values: values}
	pairs := make([]string, 0, 2*len(values))
	for _, v := range values {
		pairs = append(pairs, v, known[v])
		k := uint(v[0])<<8 | uint(v[1]) // MinLength is above 2
		ks.pairs[k>>6] |= 1 << (k & 63)
		ks.byFirst[v[0]] = append(ks.byFirst[v[0]], v)
	}
	ks.replacer = strings.NewReplacer(pairs...)
	return ks
}

// Known reports how many distinct values (counting encoded forms) r
// replaces.
func (r *Redactor) Known() int {
	if ks := r.knownSet(); ks != nil {
		return len(ks.values)
	}
	return 0
}

func (r *Redactor) knownSet() *knownSet {
	if r == nil {
		return nil
	}
	return r.set.Load()
}

// replaceKnown replaces the known values in s.
func (ks *knownSet) replaceKnown(s string) string {
	if containsKnown(ks, s) {
		return ks.replacer.Replace(s)
	}
	return s
}

// holds reports whether b contains a known value.
func (ks *knownSet) holds(b []byte) bool { return containsKnown(ks, b) }

// containsKnown reports whether s contains one of the values of ks.
func containsKnown[T string | []byte](ks *knownSet, s T) bool {
	if ks == nil {
		return false
	}
	for i := 0; i+1 < len(s); i++ {
		k := uint(s[i])<<8 | uint(s[i+1])
		if ks.pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, v := range ks.byFirst[s[i]] {
			if len(s)-i >= len(v) && string(s[i:i+len(v)]) == v {
				return true
			}
		}
	}
	return false
}

// String returns s with every credential masked: known values, credentials
// of known shapes, and the values of name=value pairs whose name is a
// credential's (api_key=..., password: ...). It is idempotent.
func (r *Redactor) String(s string) string {
	return allMatcher.apply(r.knownSet().replaceKnown(s))
}

// Content is String without the name=value heuristic: for text a model
// reads and works with, such as tool results, where a line like
// "password = os.Getenv(...)" in a source file must stay as it is. Known
// values and credentials of known shapes are still masked.
func (r *Redactor) Content(s string) string {
	return contentMatcher.apply(r.knownSet().replaceKnown(s))
}

// Bytes is String for a byte slice. It returns b itself when nothing is
// masked.
func (r *Redactor) Bytes(b []byte) []byte {
	if !r.knownSet().holds(b) && !holds(allMatcher, b) {
		return b
	}
	s := string(b)
	if out := r.String(s); out != s {
		return []byte(out)
	}
	return b
}

// Error returns err with its message masked by [Redactor.String];
// errors.Is and errors.As still see the original chain. A nil err stays
// nil, and an error with nothing to mask is returned as it is.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if masked := r.String(msg); masked != msg {
		return &redactedError{msg: masked, err: err}
	}
	return err
}

// redactedError is an error whose message was masked; it unwraps to the
// original.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
