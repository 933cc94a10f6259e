package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/toolsys"
)

// The environment variables agcore reads. They override the file and are
// overridden by flags.
const (
	// EnvConfig names the configuration file when --config is not given.
	EnvConfig = "AGCORE_CONFIG"
	// EnvDataDir overrides data_dir.
	EnvDataDir = "AGCORE_DATA_DIR"
	// EnvOpenAIBaseURL overrides the base_url of the provider named
	// "openai".
	EnvOpenAIBaseURL = "OPENAI_BASE_URL"
	// EnvOpenAIModel overrides the default model: it becomes
	// "openai/<value>".
	EnvOpenAIModel = "OPENAI_MODEL"
	// EnvOpenAIAPIKey is the api_key_env of the default "openai" provider.
	EnvOpenAIAPIKey = "OPENAI_API_KEY"
)

// OpenAIProvider is the name of the provider that OPENAI_BASE_URL,
// OPENAI_MODEL and the --base-url, --model and --api-key flags address.
const OpenAIProvider = "openai"

// Path returns the configuration file to read: flag when not empty, else
// $AGCORE_CONFIG, else $XDG_CONFIG_HOME/agcore/config.yaml (or
// ~/.config/agcore/config.yaml) when that file exists, else "" (use
// Default).
func Path(flag string, getenv func(string) string) string {
	if flag != "" {
		return flag
	}
	if p := getenv(EnvConfig); p != "" {
		return p
	}
	base := getenv("XDG_CONFIG_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	p := filepath.Join(base, "agcore", "config.yaml")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// DataDirFor returns the default data directory: $XDG_DATA_HOME/agcore,
// else ~/.local/share/agcore.
func DataDirFor(getenv func(string) string) (string, error) {
	if base := getenv("XDG_DATA_HOME"); base != "" {
		return filepath.Join(base, "agcore"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("config: data directory: %w (set --data-dir or %s)", err, EnvDataDir)
	}
	return filepath.Join(home, ".local", "share", "agcore"), nil
}

// ApplyEnv applies the environment variables that override the file:
// AGCORE_DATA_DIR, OPENAI_BASE_URL and OPENAI_MODEL (OPENAI_API_KEY is read
// when the runtime is built, through the provider's api_key_env).
func (c *Config) ApplyEnv(getenv func(string) string) error {
	return c.Apply(Overrides{
		DataDir: getenv(EnvDataDir),
		BaseURL: getenv(EnvOpenAIBaseURL),
		Model:   openAIModel(getenv(EnvOpenAIModel)),
		source:  "environment",
	})
}

func openAIModel(m string) string {
	if m == "" {
		return ""
	}
	return OpenAIProvider + "/" + m
}

// Overrides are settings given on the command line. Empty fields change
// nothing.
type Overrides struct {
	// DataDir replaces data_dir.
	DataDir string
	// Workspace replaces workspace.
	Workspace string
	// Model replaces default_model and the model of every agent: a
	// "provider/model" reference, or a bare model name of the "openai"
	// provider.
	Model string
	// BaseURL replaces the base_url of the "openai" provider.
	BaseURL string
	// APIKey is the API key of the "openai" provider.
	APIKey string
	// PermissionMode replaces permissions.mode.
	PermissionMode string
	// Allow rules are added to permissions.allow (--allow). A rule that
	// does not parse is an error naming the flag.
	Allow []string
	// Deny rules are added to permissions.deny (--deny).
	Deny []string
	// NoStream sets stream: false on every provider (--no-stream): model
	// calls ask for complete replies.
	NoStream bool

	// source names where the overrides come from in errors; empty means
	// flags.
	source string
}

// Apply applies o to c and validates the result; the problems of an
// override name its flag or variable.
func (c *Config) Apply(o Overrides) error {
	var ps problems
	key := func(flag, env string) string {
		if o.source == "environment" {
			return env
		}
		return "--" + flag
	}
	if o.DataDir != "" {
		c.DataDir = o.DataDir
	}
	if o.NoStream {
		for i := range c.Providers {
			off := false
			c.Providers[i].Stream = &off
		}
	}
	if o.Workspace != "" {
		c.Workspace = o.Workspace
	}
	if o.PermissionMode != "" {
		if _, err := toolsys.ParseMode(o.PermissionMode); err != nil {
			ps.add(key("permission-mode", ""), "%v", err)
		} else {
			c.Permissions.Mode = o.PermissionMode
		}
	}
	for _, rules := range []struct {
		flag string
		from []string
		to   *[]string
	}{{"allow", o.Allow, &c.Permissions.Allow}, {"deny", o.Deny, &c.Permissions.Deny}} {
		for _, r := range rules.from {
			if !utf8.ValidString(r) {
				ps.add(key(rules.flag, ""), "rule %q is not valid UTF-8", r)
				continue
			}
			if _, err := toolsys.ParseRule(r); err != nil {
				ps.add(key(rules.flag, ""), "%v", err)
				continue
			}
			*rules.to = append(*rules.to, r)
		}
	}
	if o.BaseURL != "" || o.APIKey != "" {
		p := c.provider(OpenAIProvider)
		switch {
		case p == nil:
			ps.add(key("base-url", EnvOpenAIBaseURL), "no provider named %q in the configuration", OpenAIProvider)
		case p.Type != TypeOpenAI:
			ps.add(key("base-url", EnvOpenAIBaseURL), "provider %q is not of type %s", OpenAIProvider, TypeOpenAI)
		default:
			if o.BaseURL != "" {
				p.BaseURL = o.BaseURL
			}
			if o.APIKey != "" {
				p.APIKey = o.APIKey
			}
		}
	}
	if o.Model != "" {
		ref := o.Model
		if !strings.Contains(ref, "/") {
			ref = openAIModel(ref)
		}
		before := len(ps)
		c.checkModelRef(&ps, key("model", EnvOpenAIModel), ref)
		if len(ps) == before {
			c.DefaultModel = ref
			for i := range c.Agents {
				c.Agents[i].Model = ""
			}
		}
	}
	if len(ps) == 0 {
		ps = c.validate()
	}
	if len(ps) > 0 {
		return &Error{Problems: ps}
	}
	return nil
}

// parseMidTurn parses a mid-turn policy name.
func parseMidTurn(s string) (actors.MidTurnPolicy, error) {
	switch s {
	case "queue":
		return actors.MidTurnQueue, nil
	case "interrupt":
		return actors.MidTurnInterrupt, nil
	case "reject":
		return actors.MidTurnReject, nil
	}
	return 0, fmt.Errorf("unknown mid-turn policy %q (known: queue, interrupt, reject)", s)
}

// parseDurability parses a durability name.
func parseDurability(s string) (memory.Durability, error) {
	switch s {
	case "sync":
		return memory.DurabilitySync, nil
	case "batch":
		return memory.DurabilityBatch, nil
	case "none":
		return memory.DurabilityNone, nil
	}
	return 0, errors.New("unknown durability " + s)
}
