package jetstream

import (
	"os"
	"testing"

	"github.com/agcore/agcore/memory/jetstream/natstest"
)

func TestMain(m *testing.M) {
	natstest.ServeIfChild()
	os.Exit(m.Run())
}
