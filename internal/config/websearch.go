package config

import (
	"fmt"
	"net/url"
	"time"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/search"
)

// The web search backends.
const (
	// SearchSearXNG is a SearXNG instance, or any service that answers
	// its JSON API.
	SearchSearXNG = "searxng"
	// SearchBrave is the Brave Search API.
	SearchBrave = "brave"
)

// WebSearch configures the web_search tool, which is registered only when
// a backend is set. Every search is one request to the backend's host,
// carrying the model's query.
type WebSearch struct {
	// Backend is "searxng" or "brave". Empty (the default) means no
	// backend: agents have no web_search tool.
	Backend string `yaml:"backend"`
	// URL is the SearXNG instance's root (required for searxng), or the
	// Brave endpoint (empty means https://api.search.brave.com/res/v1/web/search).
	URL string `yaml:"url"`
	// APIKeyEnv is the NAME of the environment variable holding the Brave
	// API key (required for brave; the key never goes in the file). The
	// key is masked in every log, event and tool result.
	APIKeyEnv string `yaml:"api_key_env"`
	// Language asks a SearXNG instance for results in this language
	// ("en"). Empty means the instance's default.
	Language string `yaml:"language"`
	// Country asks Brave for results from this country ("us"). Empty
	// means Brave's default.
	Country string `yaml:"country"`
	// MaxResults is the number of results of a call that names none. Zero
	// means 5; at most 20.
	MaxResults int `yaml:"max_results"`
	// Timeout bounds one search. Zero means 15s.
	Timeout time.Duration `yaml:"timeout"`
}

// validateWebSearch checks the web_search section.
func validateWebSearch(ps *problems, w WebSearch) {
	switch w.Backend {
	case "":
		return
	case SearchSearXNG:
		if w.URL == "" {
			ps.add("web_search.url", "required for the searxng backend: the instance's root, such as https://searx.example.org")
		}
		if w.APIKeyEnv != "" {
			ps.add("web_search.api_key_env", "the searxng backend takes no API key")
		}
	case SearchBrave:
		switch {
		case w.APIKeyEnv == "":
			ps.add("web_search.api_key_env", "required for the brave backend: the name of the variable holding the API key")
		case !envNameRE.MatchString(w.APIKeyEnv) || keyLikeRE.MatchString(w.APIKeyEnv):
			ps.add("web_search.api_key_env", "%q is not an environment variable name: give the NAME of the variable that holds the key, not the key", w.APIKeyEnv)
		}
	default:
		ps.add("web_search.backend", "unknown backend %q (known: searxng, brave)", w.Backend)
		return
	}
	if w.URL != "" {
		if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			ps.add("web_search.url", "%q: want an absolute http or https URL without credentials", w.URL)
		}
	}
	if w.MaxResults < 0 || w.MaxResults > search.MaxCount {
		ps.add("web_search.max_results", "must be between 0 and %d, got %d", search.MaxCount, w.MaxResults)
	}
	if w.Timeout < 0 {
		ps.add("web_search.timeout", "must not be negative, got %v", w.Timeout)
	}
}

// webSearch registers web_search in b.Tools when a backend is configured,
// and adds the API key to the redactor.
func (b *Built) webSearch(c *Config, opts BuildOptions) error {
	w := c.WebSearch
	var backend search.Backend
	var err error
	switch w.Backend {
	case "":
		return nil
	case SearchSearXNG:
		backend, err = search.NewSearXNG(search.SearXNGConfig{URL: w.URL, Language: w.Language, Timeout: w.Timeout})
	case SearchBrave:
		key := opts.Getenv(w.APIKeyEnv)
		if key == "" {
			return fmt.Errorf("config: web_search.api_key_env: environment variable %s is empty; set it to the Brave Search API key", w.APIKeyEnv)
		}
		opts.Redactor.Add(key, "")
		backend, err = search.NewBrave(search.BraveConfig{APIKey: key, URL: w.URL, Country: w.Country, Timeout: w.Timeout})
	default:
		return fmt.Errorf("config: web_search.backend: unknown backend %q", w.Backend)
	}
	if err != nil {
		return fmt.Errorf("config: web_search: %w", err)
	}
	tool, err := search.New(search.ToolConfig{Backend: backend, DefaultCount: w.MaxResults})
	if err != nil {
		return fmt.Errorf("config: web_search: %w", err)
	}
	if err := b.Tools.Register(tool.Tool(), toolsys.WithSource(toolsys.SourceBuiltin), toolsys.WithCategory("web"),
		toolsys.WithTags("builtin", "web")); err != nil {
		return fmt.Errorf("config: tool %s: %w", search.ToolName, err)
	}
	return nil
}
