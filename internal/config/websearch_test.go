package config

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/toolsys"
)

func TestParse_WebSearch(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte("web_search:\n  backend: brave\n  api_key_env: BRAVE_API_KEY\n  country: de\n  max_results: 8\n  timeout: 5s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.WebSearch; w.Backend != "brave" || w.APIKeyEnv != "BRAVE_API_KEY" || w.Country != "de" || w.MaxResults != 8 || w.Timeout != 5*time.Second {
		t.Errorf("web_search = %+v", w)
	}
	for in, want := range map[string]string{
		"web_search:\n  backend: google\n":                                     "agcore.yaml:2: web_search.backend: unknown backend \"google\"",
		"web_search:\n  backend: searxng\n":                                    "web_search.url: required for the searxng backend",
		"web_search:\n  backend: searxng\n  url: searx.local\n":                "web_search.url: \"searx.local\": want an absolute http or https URL",
		"web_search:\n  backend: searxng\n  url: https://u:p@searx.local\n":    "without credentials",
		"web_search:\n  backend: searxng\n  url: http://x\n  api_key_env: K\n": "web_search.api_key_env: the searxng backend takes no API key",
		"web_search:\n  backend: brave\n":                                      "web_search.api_key_env: required for the brave backend",
		"web_search:\n  backend: brave\n  api_key_env: BSAabc-123\n":           "is not an environment variable name",
		"web_search:\n  backend: brave\n  api_key_env: K\n  max_results: 21\n": "web_search.max_results: must be between 0 and 20",
		"web_search:\n  backend: brave\n  api_key_env: K\n  timeout: -1s\n":    "web_search.timeout: must not be negative",
	} {
		if _, err := Parse("agcore.yaml", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}

// TestBuild_WebSearchOnlyWithABackend: web_search is registered when a
// backend is configured, and only then.
func TestBuild_WebSearchOnlyWithABackend(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"results":[{"url":"https://go.dev/","title":"Go","content":"The Go language"}]}`))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		ws   WebSearch
		want bool
	}{
		{"no backend", WebSearch{}, false},
		{"searxng", WebSearch{Backend: SearchSearXNG, URL: srv.URL}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			cfg.DataDir, cfg.Workspace = "", t.TempDir()
			cfg.WebSearch = tc.ws
			built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
			if err != nil {
				t.Fatal(err)
			}
			defer built.Close()
			info, ok := built.Tools.Info("web_search")
			if ok != tc.want {
				t.Fatalf("web_search registered: %v, want %v", ok, tc.want)
			}
			if !ok {
				return
			}
			if info.Source != toolsys.SourceBuiltin || info.Category != "web" || info.Tool.Permission() != toolsys.PermReadOnly {
				t.Errorf("web_search = %+v", info)
			}
			res, err := built.Tools.Call(t.Context(), "web_search", json.RawMessage(`{"query":"go"}`), &toolsys.Context{})
			if err != nil || res.IsError || res.Content != "1. Go\n   https://go.dev/\n   The Go language\n" {
				t.Errorf("web_search = %+v, %v", res, err)
			}
		})
	}
	if hits.Load() != 1 {
		t.Errorf("the search service got %d requests, want 1", hits.Load())
	}
}

// TestBuild_WebSearchKeyIsASecret: the Brave key is read from the variable
// api_key_env names, sent in its header, and masked in results.
func TestBuild_WebSearchKeyIsASecret(t *testing.T) {
	const key = "BSA0123456789abcdefXYZ"
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("X-Subscription-Token"))
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"token ` + key + ` is not valid"}}`))
	}))
	defer srv.Close()
	cfg := Default()
	cfg.DataDir, cfg.Workspace = "", t.TempDir()
	cfg.WebSearch = WebSearch{Backend: SearchBrave, URL: srv.URL, APIKeyEnv: "TEST_BRAVE_KEY"}
	getenv := func(name string) string {
		if name == "TEST_BRAVE_KEY" {
			return key
		}
		return ""
	}
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	res, err := built.Tools.Call(t.Context(), "web_search", json.RawMessage(`{"query":"go"}`), &toolsys.Context{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Load() != key {
		t.Errorf("X-Subscription-Token = %v", got.Load())
	}
	if !res.IsError || !strings.Contains(res.Content, "401 Unauthorized: SUBSCRIPTION_TOKEN_INVALID: token") || strings.Contains(res.Content, key) {
		t.Errorf("result = %q, want the error with the key masked", res.Content)
	}
	if masked := built.Redactor.String("k=" + key); strings.Contains(masked, key) {
		t.Errorf("the redactor does not know the key: %s", masked)
	}

	if _, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true, Getenv: func(string) string { return "" }}); err == nil ||
		!strings.Contains(err.Error(), "web_search.api_key_env: environment variable TEST_BRAVE_KEY is empty") {
		t.Errorf("Build without the key = %v", err)
	}
}
