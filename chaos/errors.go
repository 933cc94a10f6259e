package chaos

import "errors"

var (
	// ErrInjected is wrapped by every error a wrapper injects, so that a
	// test can tell an injected failure from a real one.
	ErrInjected = errors.New("chaos: injected fault")
	// ErrOptions is wrapped by the error a constructor returns for invalid
	// options.
	ErrOptions = errors.New("chaos: invalid options")
)

// PanicValue is the value an injected tool panic panics with.
type PanicValue struct {
	// Tool is the name of the tool whose call panicked.
	Tool string
	// CallID is the id of the call, when the tool context carried one.
	CallID string
}

// String describes the panic; it is what a recovered panic prints.
func (p PanicValue) String() string {
	return "chaos: injected panic in tool " + p.Tool + " (call " + p.CallID + ")"
}
