package actors_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/redact"
	"github.com/agcore/agcore/toolsys"
)

// TestRuntime_RedactsEventsAndJournal runs a turn whose tool returns a
// configured key and a key of a known shape, and a turn whose model call
// fails with an error quoting the key, and checks that neither reaches the
// events a subscriber receives or the journal.
func TestRuntime_RedactsEventsAndJournal(t *testing.T) {
	const key = "configured-key-0123456789"
	const shaped = "sk-proj-0123456789abcdefABCDEF"
	r := redact.New()
	r.Add(key, "")
	leaky := &funcTool{name: "leaky", perm: toolsys.PermReadOnly, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{Content: "found " + key + " and " + shaped}, nil
	}}
	script := toolScript("done", scripted.ToolCall{Name: "leaky", Arguments: `{}`})
	script.Failures = []scripted.Injection{{Calls: []int{3}, Failure: scripted.Failure{Kind: scripted.FailAuth, Message: "invalid key " + key + " (" + shaped + ")"}}}
	f := newFixture(t, script, []toolsys.Tool{leaky}, func(c *actors.Config) { c.Redactor = r })

	var seen []string
	for _, text := range []string{"first", "second"} {
		for ev, err := range f.sess.Stream(t.Context(), messages.UserText(text)) {
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(ev)
			seen = append(seen, string(b))
		}
	}
	var journal []string
	for e, err := range f.rt.Journal().Read(t.Context(), "s1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(e)
		journal = append(journal, string(b))
	}
	for what, lines := range map[string][]string{"events": seen, "journal": journal} {
		all := strings.Join(lines, "\n")
		for _, secret := range []string{key, shaped} {
			if strings.Contains(all, secret) {
				t.Errorf("%s hold %q:\n%s", what, secret, all)
			}
		}
		if !strings.Contains(all, redact.Mask) {
			t.Errorf("%s show no mask:\n%s", what, all)
		}
	}
}
