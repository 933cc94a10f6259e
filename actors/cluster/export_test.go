package cluster

import (
	"context"

	"google.golang.org/protobuf/types/known/anypb"
)

// SendEnvelope sends env, as it is, to session's grain through the
// request loop, for tests that send what a newer member would.
func (m *Member) SendEnvelope(ctx context.Context, session string, env *anypb.Any, idempotent bool) (any, error) {
	return m.send(ctx, session, env, idempotent)
}
