package providertest_test

import (
	"testing"

	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/providertest"
	"github.com/agcore/agcore/providers/scripted"
)

func TestScripted(t *testing.T) {
	providertest.Run(t, func(t *testing.T, s scripted.Script) providers.Provider {
		p, err := scripted.New(s, scripted.Options{})
		if err != nil {
			t.Fatalf("scripted.New: %v", err)
		}
		return p
	})
}
