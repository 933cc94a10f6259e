package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestKnowledge_FromConfigReachesTheModel adds a page with agcore knowledge
// add, then runs a turn of an agent that sets retrieve: true in a
// configuration with knowledge.enabled: the page's text is in the request
// the model receives.
func TestKnowledge_FromConfigReachesTheModel(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Five working days."},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	config := "data_dir: data\nworkspace: .\ndefault_model: openai/m\n" +
		"providers:\n  - {name: openai, type: openai, base_url: \"" + srv.URL + "/v1\"}\n" +
		"knowledge:\n  enabled: true\n" +
		"agents:\n  - {name: support, prompt: \"You answer from the help centre.\", retrieve: true}\n"
	path := writeConfig(t, config, map[string]string{
		"refund-policy.md": "# Refund policy\nRefunds take five working days after the parcel arrives back.\n",
	})
	dir := filepath.Dir(path)
	if code, _, stderr := runCLI(t.Context(), t, nil, "--config", path, "knowledge", "add", filepath.Join(dir, "refund-policy.md")); code != exitOK {
		t.Fatalf("knowledge add: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", path, "run", "How long does a refund take?")
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 || !strings.Contains(bodies[0], "Refunds take five working days") {
		t.Fatalf("the model's request lacks the retrieved page: %q", bodies)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		t.Fatalf("data directory: %v", err)
	}
}

// TestKnowledge_RetrieveNeedsAKnowledgeBase checks that an agent asking for
// retrieval in a configuration without a knowledge base is refused at
// load, naming the key to set.
func TestKnowledge_RetrieveNeedsAKnowledgeBase(t *testing.T) {
	path := writeConfig(t, "agents:\n  - {name: support, prompt: hi, retrieve: true}\n", nil)
	code, _, stderr := runCLI(t.Context(), t, nil, "--config", path, "run", "hello")
	if code != exitUsage || !strings.Contains(stderr, "agents[0].retrieve") || !strings.Contains(stderr, "knowledge.enabled") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// TestKnowledge_AddAppliesTheConfiguredEviction adds three pages with
// agcore knowledge add under a capacity policy of two pages: the
// configuration's eviction applies to the CLI's writes too, so two pages
// are left.
func TestKnowledge_AddAppliesTheConfiguredEviction(t *testing.T) {
	config := "data_dir: data\nworkspace: .\n" +
		"knowledge:\n  enabled: true\n  eviction: {policy: capacity, max_pages: 2, check_interval: 1}\n"
	path := writeConfig(t, config, map[string]string{
		"a.md": "# Alpha\nThe first page.\n",
		"b.md": "# Beta\nThe second page.\n",
		"c.md": "# Gamma\nThe third page.\n",
	})
	dir := filepath.Dir(path)
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		if code, _, stderr := runCLI(t.Context(), t, nil, "--config", path, "knowledge", "add", filepath.Join(dir, name)); code != exitOK {
			t.Fatalf("knowledge add %s: exit %d: %s", name, code, stderr)
		}
	}
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--config", path, "knowledge", "list", "--json")
	if code != exitOK {
		t.Fatalf("knowledge list: exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "\n"); n != 2 || strings.Contains(stdout, "Alpha") {
		t.Fatalf("knowledge list = %q; want the two newest pages (Beta, Gamma)", stdout)
	}
}
