package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/sandbox"
)

func TestLoad_Example(t *testing.T) {
	cfg, err := Load(filepath.Join("..", "..", "docs", "agcore.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(cfg.Agents); got != 2 || cfg.Agents[0].Name != "coder" {
		t.Errorf("agents = %+v", cfg.Agents)
	}
	if cfg.Limits.ToolTimeout != time.Minute || cfg.Limits.MidTurn != "queue" {
		t.Errorf("limits = %+v", cfg.Limits)
	}
	if cfg.Retry.MaxAttempts != 3 || cfg.Retry.MaxRetryAfter != 30*time.Second {
		t.Errorf("retry = %+v", cfg.Retry)
	}
	// The example shows the server's defaults.
	wantServe := Serve{CORSOrigins: []string{}, AllowedHosts: []string{},
		ReadHeaderTimeout: httpapi.DefaultReadHeaderTimeout, BodyTimeout: httpapi.DefaultBodyTimeout,
		IdleTimeout: httpapi.DefaultIdleTimeout, MaxConnections: httpapi.DefaultMaxConnections}
	if diff := cmp.Diff(wantServe, cfg.Serve); diff != "" {
		t.Errorf("serve (-want +got)\n%s", diff)
	}
	built, err := Build(t.Context(), cfg, BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	if r := built.Runtime.Retry; r.MaxAttempts != 3 || r.MaxRetryAfter != 30*time.Second {
		t.Errorf("runtime retry policy = %+v", r)
	}
	if cfg.PromptDirs == nil || len(cfg.PromptDirs) != 0 {
		t.Errorf("prompt_dirs = %#v, want the example's empty list", cfg.PromptDirs)
	}
	if cfg.Permissions.ApprovalTimeout != DefaultApprovalTimeout {
		t.Errorf("permissions.approval_timeout = %v, want the default %v", cfg.Permissions.ApprovalTimeout, DefaultApprovalTimeout)
	}
	if p := cfg.Agents[0].Params; p.Temperature == nil || *p.Temperature != 0.2 || p.MaxTokens != 4096 {
		t.Errorf("coder params = %+v, want temperature 0.2 and max_tokens 4096", p)
	}
	if p := built.Runtime.Agents[0].Params; p.Temperature == nil || *p.Temperature != 0.2 || p.MaxTokens != 4096 {
		t.Errorf("the coder agent's runtime params = %+v", p)
	}
	if p := cfg.provider("openai"); p.Stream == nil || !*p.Stream || cfg.Agents[0].Stream == nil || !*cfg.Agents[0].Stream {
		t.Errorf("the example does not show stream: true on the openai provider and the coder agent")
	}
	if got := built.Runtime.Providers.Names(); !cmp.Equal(got, []string{"local", "mock", "openai"}) {
		t.Errorf("providers = %v", got)
	}
	if p := built.Runtime.Prices["gpt-4o"]; p.OutputPerMillion != 10 {
		t.Errorf("price of gpt-4o = %+v", p)
	}
	if _, ok := built.Tools.Get("bash"); !ok {
		t.Error("bash is not registered")
	}
}

// TestParse_Serve loads every key of the serve section.
func TestParse_Serve(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte(`serve:
  cors_origins: [https://console.example.com, "HTTP://127.0.0.1:5173/"]
  allowed_hosts: [agents.internal, "api.example.com:8443"]
  read_header_timeout: 5s
  body_timeout: 20s
  idle_timeout: 90s
  max_connections: 64
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Serve{
		CORSOrigins:       []string{"https://console.example.com", "HTTP://127.0.0.1:5173/"},
		AllowedHosts:      []string{"agents.internal", "api.example.com:8443"},
		ReadHeaderTimeout: 5 * time.Second,
		BodyTimeout:       20 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxConnections:    64,
	}
	if diff := cmp.Diff(want, cfg.Serve); diff != "" {
		t.Errorf("serve (-want +got)\n%s", diff)
	}
}

func TestDefault_IsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestParse_EmptyFileIsDefault(t *testing.T) {
	cfg, err := Parse("empty.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Default(), cfg); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestParse_Errors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string // the first problem, exactly
	}{
		{"syntax", "limits:\n  max_round_trips: 3\n\tmid_turn: queue\n", "agcore.yaml:2: invalid YAML: found a tab character that violates indentation"},
		{"unknown top-level key", "agents: []\nmodle: x\n", `agcore.yaml:2: modle: unknown key`},
		{"unknown nested key", "agents:\n  - name: a\n    modle: openai/x\n", `agcore.yaml:3: agents[0].modle: unknown key; did you mean "model"?`},
		{"wrong type", "limits:\n  max_round_trips: many\n", `agcore.yaml:2: limits.max_round_trips: want an integer, got "many"`},
		{"duration as number", "limits:\n  tool_timeout: 30\n", `agcore.yaml:2: limits.tool_timeout: want a duration such as "30s" or "1m30s", got "30"`},
		{"unknown provider", "agents:\n  - name: a\n  - name: b\n    model: foo/bar\n", `agcore.yaml:4: agents[1].model: unknown provider "foo" (known: openai, mock)`},
		{"bad durability", "durability: always\n", `agcore.yaml:1: durability: unknown durability "always" (known: sync, batch, none)`},
		{"provider type", "providers:\n  - name: x\n    type: claude\ndefault_model: x/m\n", `agcore.yaml:3: providers[0].type: unknown provider type "claude" (known: openai, scripted)`},
		{"duplicate provider", "providers:\n  - {name: x, type: scripted}\n  - {name: x, type: scripted}\ndefault_model: x/m\n", `agcore.yaml:3: providers[1].name: duplicate provider "x"`},
		{"api key in file", "providers:\n  - name: openai\n    type: openai\n    api_key_env: sk-abc123\n", `agcore.yaml:4: providers[0].api_key_env: want the NAME of an environment variable (such as OPENAI_API_KEY), never the key itself`},
		{"base url", "providers:\n  - name: openai\n    type: openai\n    base_url: ftp://x\n    default_model: m\n", `agcore.yaml:4: providers[0].base_url: want an http or https URL, got "ftp://x"`},
		{"scripted with base url", "providers:\n  - name: mock\n    type: scripted\n    base_url: http://x\ndefault_model: mock/s\n", `agcore.yaml:4: providers[0].base_url: only for type openai`},
		{"missing script", "providers:\n  - name: mock\n    type: scripted\n    script: nope.yaml\ndefault_model: mock/s\n", `agcore.yaml:4: providers[0].script: `},
		{"unknown scripted model", "agents:\n  - name: a\n    model: mock/nosuch\n", `agcore.yaml:3: agents[0].model: provider mock has no model "nosuch" (known: mock/scripted)`},
		{"unknown model of a scripted provider with a default model", "providers:\n  - {name: fake, type: scripted, default_model: demo}\ndefault_model: fake/other\n", `agcore.yaml:3: default_model: provider fake has no model "other" (known: fake/demo)`},
		{"model ref without slash", "default_model: gpt-4o\n", `agcore.yaml:1: default_model: want "provider/model", got "gpt-4o"`},
		{"negative price", "models:\n  - name: m\n    output_per_million: -1\n", `agcore.yaml:3: models[0].output_per_million: must not be negative, got -1`},
		{"unnamed model", "models:\n  - input_per_million: 1\n", `agcore.yaml:2: models[0].name: required`},
		{"bad agent name", "agents:\n  - name: two words\n", `agcore.yaml:2: agents[0].name: want 1 to 64 of [a-zA-Z0-9_.-], got "two words"`},
		{"duplicate agent", "agents:\n  - name: a\n  - name: a\n", `agcore.yaml:3: agents[1].name: duplicate agent "a"`},
		{"bad template", "agents:\n  - name: a\n    prompt: \"{{.X\"\n", `agcore.yaml:3: agents[0].prompt: template: a:1: `},
		{"bad tool pattern", "agents:\n  - name: a\n    tools: [\"[\"]\n", `agcore.yaml:3: agents[0].tools[0]: invalid tool pattern "["`},
		{"agent mid_turn", "agents:\n  - name: a\n    limits:\n      mid_turn: reject\n", `agcore.yaml:4: agents[0].limits.mid_turn: set mid_turn in the global limits only`},
		{"unknown default agent", "agents:\n  - name: a\ndefault_agent: b\n", `agcore.yaml:3: default_agent: unknown agent "b" (known: a)`},
		{"mcp neither", "mcp_servers:\n  - name: fs\n", `agcore.yaml:2: mcp_servers[0]: set command (a stdio server) or url (an HTTP server)`},
		{"mcp both", "mcp_servers:\n  - name: fs\n    command: x\n    url: http://h/mcp\n", `agcore.yaml:2: mcp_servers[0]: set command or url, not both`},
		{"mcp bad env", "mcp_servers:\n  - name: fs\n    command: x\n    env: [NOEQUALS]\n", `agcore.yaml:4: mcp_servers[0].env[0]: want KEY=value, got "NOEQUALS"`},
		{"mcp headers on stdio", "mcp_servers:\n  - name: fs\n    command: x\n    headers: {A: b}\n", `agcore.yaml:4: mcp_servers[0].headers: only for a server with url`},
		{"mcp permission", "mcp_servers:\n  - name: fs\n    url: http://h/mcp\n    permission: root\n", `agcore.yaml:4: mcp_servers[0].permission: unknown permission "root"`},
		{"temperature", "agents:\n  - name: a\n    params:\n      temperature: 3\n", `agcore.yaml:4: agents[0].params.temperature: must be between 0 and 2, got 3`},
		{"top_p", "agents:\n  - name: a\n    params: {top_p: 1.5}\n", `agcore.yaml:3: agents[0].params.top_p: must be above 0 and at most 1, got 1.5`},
		{"max_tokens", "agents:\n  - name: a\n    params:\n      max_tokens: -5\n", `agcore.yaml:4: agents[0].params.max_tokens: must not be negative, got -5`},
		{"response_format type", "agents:\n  - name: a\n    params:\n      response_format: {type: xml}\n", `agcore.yaml:4: agents[0].params.response_format.type: unknown type "xml" (want text, json_object or json_schema)`},
		{"response_format schema", "agents:\n  - name: a\n    params:\n      response_format:\n        type: json_schema\n        name: answer\n", `agcore.yaml:4: agents[0].params.response_format.schema: required for json_schema`},
		{"response_format strict", "agents:\n  - name: a\n    params:\n      response_format:\n        type: json_object\n        strict: true\n", `agcore.yaml:6: agents[0].params.response_format.strict: only for json_schema`},
		{"reasoning_effort", "agents:\n  - name: a\n    params:\n      reasoning_effort: extreme\n", `agcore.yaml:4: agents[0].params.reasoning_effort: unknown effort "extreme" (want minimal, low, medium or high)`},
		{"stop", "agents:\n  - name: a\n    params:\n      stop: [END, \"\"]\n", `agcore.yaml:4: agents[0].params.stop[1]: empty`},
		{"params unknown key", "agents:\n  - name: a\n    params:\n      temprature: 1\n", `agcore.yaml:4: agents[0].params.temprature: unknown key; did you mean "temperature"?`},
		{"mcp startup timeout", "mcp_servers:\n  - name: fs\n    command: x\n    startup_timeout: -1s\n", `agcore.yaml:4: mcp_servers[0].startup_timeout: must not be negative, got -1s`},
		{"approval timeout", "permissions:\n  approval_timeout: -1m\n", `agcore.yaml:2: permissions.approval_timeout: must not be negative, got -1m0s`},
		{"permission mode", "permissions:\n  mode: yolo\n", `agcore.yaml:2: permissions.mode: unknown permission mode "yolo"`},
		{"permission rule", "permissions:\n  deny: [\"bash(\"]\n", `agcore.yaml:2: permissions.deny[0]: `},
		{"negative limit", "limits:\n  max_parallel_tools: -2\n", `agcore.yaml:2: limits.max_parallel_tools: must not be negative, got -2`},
		{"negative timeout", "limits:\n  tool_timeout: -1s\n", `agcore.yaml:2: limits.tool_timeout: must not be negative, got -1s`},
		{"mid turn", "limits:\n  mid_turn: drop\n", `agcore.yaml:2: limits.mid_turn: unknown mid-turn policy "drop" (known: queue, interrupt, reject)`},
		{"negative attempts", "retry:\n  max_attempts: -1\n", `agcore.yaml:2: retry.max_attempts: must not be negative, got -1 (1 disables retrying)`},
		{"negative retry-after cap", "retry:\n  max_retry_after: -5s\n", `agcore.yaml:2: retry.max_retry_after: must not be negative, got -5s`},
		{"web_fetch host with scheme", "web_fetch:\n  allowed_hosts: [docs.example.com, https://x.example.com]\n", `agcore.yaml:2: web_fetch.allowed_hosts[1]: "https://x.example.com": want a host name (docs.example.com), *.domain for its subdomains, or * for any host`},
		{"compaction window", "compaction:\n  context_window: 30000\n", `agcore.yaml:2: compaction.context_window: 30000 leaves no room for the history after reserved_output (20000) and buffer (13000)`},
		{"compaction model", "compaction:\n  summary_model: nosuch/x\n", `agcore.yaml:2: compaction.summary_model: unknown provider "nosuch"`},
		{"negative depth", "sub_agents:\n  max_depth: -2\n", `agcore.yaml:2: sub_agents.max_depth: must not be negative`},
		{"negative budget", "sub_agents:\n  enabled: true\n  budget:\n    max_cost: -1\n", `agcore.yaml:4: sub_agents.budget.max_cost: must not be negative`},
		{"retrieve without knowledge", "agents:\n  - {name: a, prompt: hi, retrieve: true}\n", `agcore.yaml:2: agents[0].retrieve: no knowledge base is configured: set knowledge.enabled: true`},
		{"sandbox mode", "sandbox:\n  mode: off\n", `agcore.yaml:2: sandbox.mode: unknown mode "off" (known: refuse, warn)`},
		{"sandbox port", "sandbox:\n  allow_ports:\n    - 443\n    - 0\n", `agcore.yaml:4: sandbox.allow_ports[1]: 0 is not a TCP port (1-65535)`},
		{"sandbox env", "sandbox:\n  env: [GOCACHE]\n", `agcore.yaml:2: sandbox.env[0]: want NAME=value, got "GOCACHE"`},
		{"sandbox home", "sandbox:\n  env: [HOME=/root]\n", `agcore.yaml:2: sandbox.env[0]: HOME is the command's private directory and cannot be set`},
		{"sandbox path", "sandbox:\n  extra_write_paths: [cache]\n", `agcore.yaml:2: sandbox.extra_write_paths[0]: "cache" is not an absolute path`},
		{"serve wildcard origin", "serve:\n  cors_origins:\n    - https://ok.example\n    - \"*\"\n", `agcore.yaml:4: serve.cors_origins[1]: origin "*": want http://host[:port] or https://host[:port]`},
		{"serve origin with path", "serve:\n  cors_origins: [https://ok.example/app]\n", `agcore.yaml:2: serve.cors_origins[0]: origin "https://ok.example/app": want only scheme://host[:port]`},
		{"serve host with scheme", "serve:\n  allowed_hosts: [http://agents.internal]\n", `agcore.yaml:2: serve.allowed_hosts[0]: allowed host "http://agents.internal": want a host name or host:port`},
		{"serve negative timeout", "serve:\n  body_timeout: -1s\n", `agcore.yaml:2: serve.body_timeout: must not be negative, got -1s`},
		{"serve negative cap", "serve:\n  max_connections: -5\n", `agcore.yaml:2: serve.max_connections: must not be negative, got -5`},
		{"serve unknown key", "serve:\n  cors_origin: [https://ok.example]\n", `agcore.yaml:2: serve.cors_origin: unknown key; did you mean "cors_origins"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("agcore.yaml", []byte(tt.yaml))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			var ce *Error
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("err = %#v, want *Error with problems", err)
			}
			if got := ce.Problems[0].String(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("first problem:\n got %s\nwant %s...\n(all: %v)", got, tt.want, err)
			}
		})
	}
}

func TestParse_RelativePaths(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(script, []byte("rules:\n  - match: {any: true}\n    reply: {text: hi}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(filepath.Join(dir, "agcore.yaml"), []byte(
		"workspace: ws\nproviders:\n  - {name: mock, type: scripted, script: rules.yaml}\ndefault_model: mock/scripted\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workspace != filepath.Join(dir, "ws") || cfg.Providers[0].Script != script {
		t.Errorf("workspace %q, script %q", cfg.Workspace, cfg.Providers[0].Script)
	}
}

func TestPrecedence(t *testing.T) {
	file := "data_dir: /from/file\ndefault_model: mock/scripted\nproviders:\n" +
		"  - {name: openai, type: openai, base_url: \"http://file:1/v1\", default_model: m}\n  - {name: mock, type: scripted}\n"
	env := map[string]string{EnvDataDir: "/from/env", EnvOpenAIBaseURL: "http://env:2/v1", EnvOpenAIModel: "env-model"}
	tests := []struct {
		name                    string
		env                     map[string]string
		flags                   Overrides
		wantData, wantURL, want string
	}{
		{"file", nil, Overrides{}, "/from/file", "http://file:1/v1", "mock/scripted"},
		{"environment over file", env, Overrides{}, "/from/env", "http://env:2/v1", "openai/env-model"},
		{"flags over environment", env, Overrides{DataDir: "/from/flag", BaseURL: "http://flag:3/v1", Model: "mock/"}, "/from/flag", "http://flag:3/v1", "mock/"},
		{"bare flag model is an openai model", nil, Overrides{Model: "gpt-4.1"}, "/from/file", "http://file:1/v1", "openai/gpt-4.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("agcore.yaml", []byte(file))
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.ApplyEnv(func(k string) string { return tt.env[k] }); err != nil {
				t.Fatal(err)
			}
			if err := cfg.Apply(tt.flags); err != nil {
				t.Fatal(err)
			}
			got := []string{cfg.DataDir, cfg.provider("openai").BaseURL, cfg.DefaultModel}
			if diff := cmp.Diff([]string{tt.wantData, tt.wantURL, tt.want}, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestApply_Errors(t *testing.T) {
	tests := []struct {
		name string
		o    Overrides
		want string
	}{
		{"unknown provider", Overrides{Model: "foo/bar"}, `--model: unknown provider "foo" (known: openai, mock)`},
		{"bad url", Overrides{BaseURL: "nope"}, `providers[0].base_url: want an http or https URL, got "nope"`},
		{"unknown model of a scripted provider", Overrides{Model: "mock/nosuch"}, `--model: provider mock has no model "nosuch" (known: mock/scripted)`},
		{"permission mode", Overrides{PermissionMode: "yolo"}, `--permission-mode: unknown permission mode "yolo" (want ask, read-only, accept-edits or bypass)`},
		{"allow rule", Overrides{Allow: []string{"bash(go test *)", "bash(go test"}}, `--allow: rule "bash(go test": missing closing parenthesis`},
		{"deny rule", Overrides{Deny: []string{"write file"}}, `--deny: rule "write file": invalid character ' ' in tool name`},
		{"empty allow rule", Overrides{Allow: []string{" "}}, `--allow: rule "": empty tool name`},
		{"allow rule that is not UTF-8", Overrides{Allow: []string{"bash(\xc4)"}}, `--allow: rule "bash(\xc4)" is not valid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Default().Apply(tt.o)
			if !errors.Is(err, ErrInvalid) || err.Error() != tt.want {
				t.Errorf("err = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestPathAndDataDir(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": dir, "XDG_DATA_HOME": "/xdg/data"}
	getenv := func(k string) string { return env[k] }
	if got := Path("", getenv); got != "" {
		t.Errorf("Path without a file = %q, want empty", got)
	}
	want := filepath.Join(dir, "agcore", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(want, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Path("", getenv); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	env[EnvConfig] = "/env/agcore.yaml"
	if got := Path("", getenv); got != "/env/agcore.yaml" {
		t.Errorf("Path with %s = %q", EnvConfig, got)
	}
	if got := Path("flag.yaml", getenv); got != "flag.yaml" {
		t.Errorf("Path with a flag = %q", got)
	}
	if got, err := DataDirFor(getenv); err != nil || got != "/xdg/data/agcore" {
		t.Errorf("DataDirFor = %q, %v", got, err)
	}
}

func TestBuild_Runtime(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte(`
default_model: mock/scripted
durability: none
agents:
  - name: helper
    prompt: "You help {{.Who}}."
    vars: {Who: everyone}
    tools: [list_dir, read_file, write_file]
limits:
  max_round_trips: 5
  mid_turn: reject
retry:
  max_attempts: 5
  max_retry_after: 10s
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = t.TempDir()
	built, err := Build(t.Context(), cfg, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	rc := built.Runtime
	if rc.Limits.MaxRoundTrips != 5 || rc.Limits.MidTurn != actors.MidTurnReject || rc.Durability != memory.DurabilityNone {
		t.Errorf("limits %+v, durability %v", rc.Limits, rc.Durability)
	}
	if rc.Retry.MaxAttempts != 5 || rc.Retry.MaxRetryAfter != 10*time.Second {
		t.Errorf("retry policy %+v, want 5 attempts and a 10s Retry-After cap", rc.Retry)
	}
	rc.DataDir = ""
	rt, err := actors.NewInMemory(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	}()
	sess, err := rt.Open(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Workspace, "README.md"), []byte("# x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Workspace, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := sess.Submit(t.Context(), messages.UserText("summarise"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "completed" || len(res.ToolCalls) != 4 {
		t.Errorf("outcome %s, %d tool calls: %+v", res.Outcome, len(res.ToolCalls), res.ToolCalls)
	}
	for _, c := range res.ToolCalls {
		if c.IsError {
			t.Errorf("tool call %s failed: %s", c.Name, c.Content)
		}
	}
}

func TestBuild_MCPServers(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte(`
mcp_servers:
  - name: fs
    command: node
    args: [server.js, /data]
    env: [MODE=ro]
    permission: read-only
  - name: remote
    url: http://127.0.0.1:9000/mcp
    bearer_token_env: REMOTE_TOKEN
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = t.TempDir()
	getenv := func(k string) string {
		if k == "REMOTE_TOKEN" {
			return "tok"
		}
		return ""
	}
	built, err := Build(t.Context(), cfg, BuildOptions{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	servers := built.Runtime.MCPServers
	if len(servers) != 2 {
		t.Fatalf("MCPServers = %+v, want fs and remote", servers)
	}
	fs, remote := servers[0], servers[1]
	if fs.Name != "fs" || fs.Command != "node" || len(fs.Args) != 2 || fs.Permission == nil || *fs.Permission != toolsys.PermReadOnly {
		t.Errorf("fs = %+v", fs)
	}
	if remote.Name != "remote" || remote.URL != "http://127.0.0.1:9000/mcp" || remote.BearerToken != "tok" {
		t.Errorf("remote = %+v", remote)
	}

	// Commands that only list built-in tools leave the servers out.
	built2, err := Build(t.Context(), cfg, BuildOptions{Getenv: getenv, SkipMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built2.Close()
	if len(built2.Runtime.MCPServers) != 0 {
		t.Errorf("SkipMCP kept %d servers", len(built2.Runtime.MCPServers))
	}
}

// TestBuild_OneRetryLayer runs one turn of a runtime built from a file whose
// openai provider points at a server that fails every request: the server
// receives exactly retry.max_attempts requests, the runtime's retries, and
// none from a retry layer of the provider's own.
func TestBuild_OneRetryLayer(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"down","type":"server_error"}}`)
	}))
	t.Cleanup(srv.Close)
	cfg, err := Parse("agcore.yaml", []byte(`
default_model: openai/gpt-test
durability: none
providers:
  - {name: openai, type: openai, base_url: "`+srv.URL+`/v1"}
retry:
  max_attempts: 4
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = t.TempDir()
	built, err := Build(t.Context(), cfg, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	rc := built.Runtime
	rc.DataDir = ""
	var waits []time.Duration
	rc.Retry.Sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	rt, err := actors.NewInMemory(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	}()
	sess, err := rt.Open(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Submit(t.Context(), messages.UserText("hi")); err == nil || !strings.Contains(err.Error(), "server error (status 500)") {
		t.Fatalf("Submit err = %v, want the server error", err)
	}
	if got := requests.Load(); got != 4 || len(waits) != 3 {
		t.Errorf("requests = %d, runtime waits = %v; want 4 requests and 3 waits", got, waits)
	}
}

func TestBuild_Sandbox(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte("sandbox:\n  mode: warn\n  allow_ports: [443]\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = t.TempDir()
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	if built.Sandbox.Mode() != sandbox.Warn || !slices.Equal(built.Sandbox.AllowPorts(), []int{443}) {
		t.Fatalf("sandbox mode %v, ports %v", built.Sandbox.Mode(), built.Sandbox.AllowPorts())
	}
	def, err := Parse("agcore.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.Sandbox.Mode != "refuse" {
		t.Fatalf("default sandbox mode %q, want refuse", def.Sandbox.Mode)
	}
}

func TestBuild_RefusalNamesTheConfigKeys(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte("permissions:\n  mode: ask\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = t.TempDir()
	built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	ws, err := toolsys.NewWorkspace(cfg.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	res, err := built.Tools.Call(t.Context(), "bash", json.RawMessage(`{"command":"touch made"}`), &toolsys.Context{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no approver", "permissions.mode", "permissions.allow"} {
		if !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("refusal %+v does not name %q", res, want)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.Workspace, "made")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused command ran (%v)", err)
	}
}

// TestBuild_FilesAllowHardlinks reads a file with two hard links through the
// read_file tool of a built configuration: refused by default, read with
// files.allow_hardlinks.
func TestBuild_FilesAllowHardlinks(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprint(allow), func(t *testing.T) {
			cfg, err := Parse("agcore.yaml", []byte(fmt.Sprintf("files:\n  allow_hardlinks: %v\n", allow)))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Workspace = t.TempDir()
			if err := os.WriteFile(filepath.Join(cfg.Workspace, "a.txt"), []byte("linked content"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(filepath.Join(cfg.Workspace, "a.txt"), filepath.Join(cfg.Workspace, "b.txt")); err != nil {
				t.Skipf("hard links: %v", err)
			}
			built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
			if err != nil {
				t.Fatal(err)
			}
			defer built.Close()
			res, err := built.Tools.Call(t.Context(), "read_file", json.RawMessage(`{"path":"a.txt"}`), &toolsys.Context{Workspace: built.Runtime.Workspace})
			if err != nil {
				t.Fatal(err)
			}
			if got := !res.IsError && strings.Contains(res.Content, "linked content"); got != allow {
				t.Errorf("allow_hardlinks %v: read_file = %+v", allow, res)
			}
		})
	}
}

// TestPermissions_Mode checks that a file without permissions.mode leaves
// the mode to the command (Build then uses DefaultPermissionMode), and that
// --permission-mode replaces the file's mode.
func TestPermissions_Mode(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte("permissions:\n  allow: [\"bash(go test *)\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Permissions.Mode != "" {
		t.Errorf("mode %q, want it left to the command", cfg.Permissions.Mode)
	}
	if got := cfg.permissionConfig().Mode; got != toolsys.ModeAcceptEdits {
		t.Errorf("built mode %v, want %s", got, DefaultPermissionMode)
	}
	cfg, err = Parse("agcore.yaml", []byte("permissions:\n  mode: bypass\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Apply(Overrides{PermissionMode: "read-only"}); err != nil {
		t.Fatal(err)
	}
	if got := cfg.permissionConfig().Mode; got != toolsys.ModeReadOnly {
		t.Errorf("mode %v after --permission-mode read-only", got)
	}
}

// TestPermissions_FlagRules checks that --allow and --deny rules are added
// to the file's permissions.allow and permissions.deny, and that the built
// pipeline applies them: the flag's allow rule runs a call that the file's
// rules alone send for approval, and the flag's deny rule refuses a call
// the mode runs.
func TestPermissions_FlagRules(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte("permissions:\n  allow: [\"bash(ls *)\"]\n  deny: [\"bash(rm *)\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Apply(Overrides{Allow: []string{"bash(go test **)"}, Deny: []string{"write_file(secrets/**)"}}); err != nil {
		t.Fatal(err)
	}
	got := [][]string{cfg.Permissions.Allow, cfg.Permissions.Deny}
	want := [][]string{{"bash(ls *)", "bash(go test **)"}, {"bash(rm *)", "write_file(secrets/**)"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got)\n%s", diff)
	}
	perms, err := toolsys.NewPermissions(cfg.permissionConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := perms.Check(ctx, toolsys.Request{Tool: "bash", Permission: toolsys.PermExecute, Subject: "go test ./..."}); err != nil {
		t.Errorf("bash go test with --allow 'bash(go test **)': %v", err)
	}
	err = perms.Check(ctx, toolsys.Request{Tool: "write_file", Permission: toolsys.PermWrite, Subject: "secrets/key"})
	if pe, ok := errors.AsType[*toolsys.PermissionError](err); !ok || pe.Stage != toolsys.StageDeny {
		t.Errorf("write_file secrets/key with --deny 'write_file(secrets/**)': %v, want refused by the deny rule", err)
	}
}

// TestBuild_WebFetchAllowedHosts fetches a page from a 127.0.0.1 server
// through the web_fetch tool of a built configuration: refused by default,
// fetched once web_fetch.allowed_hosts names the host.
func TestBuild_WebFetchAllowedHosts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "fetched page")
	}))
	defer srv.Close()
	for _, hosts := range []string{"[]", "[127.0.0.1]"} {
		t.Run(hosts, func(t *testing.T) {
			cfg, err := Parse("agcore.yaml", []byte("web_fetch:\n  allowed_hosts: "+hosts+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Workspace = t.TempDir()
			built, err := Build(t.Context(), cfg, BuildOptions{SkipMCP: true})
			if err != nil {
				t.Fatal(err)
			}
			defer built.Close()
			res, err := built.Tools.Call(t.Context(), "web_fetch", json.RawMessage(`{"url":"`+srv.URL+`"}`), &toolsys.Context{Workspace: built.Runtime.Workspace})
			if err != nil {
				t.Fatal(err)
			}
			want := hosts != "[]"
			if got := !res.IsError && strings.Contains(res.Content, "fetched page"); got != want {
				t.Errorf("allowed_hosts %s: web_fetch = %+v", hosts, res)
			}
		})
	}
}

// TestBuild_CompactionSubAgentsMCP maps the compaction, sub_agents and MCP
// resource and prompt keys onto the runtime's configuration.
func TestBuild_CompactionSubAgentsMCP(t *testing.T) {
	cfg, err := Parse("agcore.yaml", []byte(`
default_model: mock/scripted
compaction:
  context_window: 64000
  keep_recent: 10
  summary_model: mock/scripted
sub_agents:
  enabled: true
  handoff: true
  max_depth: 2
  budget: {max_tokens: 5000, max_time: 2m}
mcp_servers:
  - {name: docs, url: "http://127.0.0.1:1/mcp", resource_tools: true, prompt_tools: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Workspace = t.TempDir()
	built, err := Build(t.Context(), cfg, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer built.Close()
	rc := built.Runtime
	if c := rc.Compaction; c.Config.ContextWindow != 64000 || c.Config.KeepRecent != 10 || c.SummaryModel != "mock/scripted" || c.Disabled {
		t.Errorf("compaction %+v", c)
	}
	if s := rc.SubAgents; !s.Enabled || !s.Handoff || s.MaxDepth != 2 || s.Budget.MaxTokens != 5000 || s.Budget.MaxTime != 2*time.Minute {
		t.Errorf("sub-agents %+v", s)
	}
	if len(rc.MCPServers) != 1 || !rc.MCPServers[0].ResourceTools || !rc.MCPServers[0].PromptTools {
		t.Errorf("MCP servers %+v", rc.MCPServers)
	}
}
