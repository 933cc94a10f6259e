package knowledge

import (
	"errors"
	"fmt"

	"github.com/agcore/agcore/memory"
)

// ErrNotFound is memory.ErrNotFound: a page does not exist. Errors returned
// for a missing page wrap it, so errors.Is(err, memory.ErrNotFound) holds.
var ErrNotFound = memory.ErrNotFound

// ErrExists is returned by Create when a page with the same id exists.
var ErrExists = errors.New("knowledge: page already exists")

// ErrInvalid is wrapped by every error about an invalid page, id or tag.
var ErrInvalid = errors.New("knowledge: invalid input")

// ErrCorrupt is wrapped when a stored record cannot be decoded.
var ErrCorrupt = errors.New("knowledge: corrupt record")

// ErrEviction is wrapped when a write succeeded but the eviction pass that
// followed it failed. The page was written.
var ErrEviction = errors.New("knowledge: eviction failed")

// InvalidError describes an invalid field of a page (or an invalid argument).
// It wraps ErrInvalid.
type InvalidError struct {
	// Field names what is invalid: "id", "tags[2]", "tag", ...
	Field string
	// Value is the offending value, quoted in the message.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

// Error implements error.
func (e *InvalidError) Error() string {
	return fmt.Sprintf("knowledge: invalid %s %q: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalid.
func (e *InvalidError) Unwrap() error { return ErrInvalid }
