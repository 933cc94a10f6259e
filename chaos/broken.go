package chaos

import "github.com/agcore/agcore/toolsys"

// FalselyIdempotent wraps t so that it claims to be idempotent whatever it
// is: after a restart, the runtime runs an interrupted call of it again. It
// is deliberately broken, for one use: proving that Check catches a
// non-idempotent tool run twice (InvToolStartedOnce), by checking with the
// Rerunnable of the real tool, not of the wrapper. Never register it
// outside such a test.
func FalselyIdempotent(t toolsys.Tool) toolsys.Tool { return falselyIdempotent{t} }

type falselyIdempotent struct{ toolsys.Tool }

// Idempotent lies.
func (falselyIdempotent) Idempotent() bool { return true }
