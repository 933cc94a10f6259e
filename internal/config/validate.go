package config

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/wasm"
)

var (
	nameRE    = regexp.MustCompile(`\A[a-zA-Z0-9_-]{1,32}\z`)
	agentRE   = regexp.MustCompile(`\A[a-zA-Z0-9_.-]{1,64}\z`)
	envNameRE = regexp.MustCompile(`\A[A-Za-z_][A-Za-z0-9_]*\z`)
	// fetchHostRE matches an entry of web_fetch.allowed_hosts: "*", a host
	// name or an IP address, optionally behind "*." (no scheme, port or
	// path).
	fetchHostRE = regexp.MustCompile(`\A(\*|(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])\z`)
	// keyLikeRE recognises values that look like a secret rather than the
	// name of a variable holding one.
	keyLikeRE = regexp.MustCompile(`\A(sk-|sk_|xox[bp]-|ghp_|gho_|AKIA)|[^A-Za-z0-9_]`)
)

// problems collects the problems of a configuration.
type problems []Problem

func (ps *problems) add(key, format string, args ...any) {
	*ps = append(*ps, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Validate checks every field of c and returns an *Error listing its
// problems, or nil. Load validates already; call Validate after changing a
// Config.
func (c *Config) Validate() error {
	if ps := c.validate(); len(ps) > 0 {
		return &Error{Problems: ps}
	}
	return nil
}

func (c *Config) validate() []Problem {
	var ps problems
	switch c.Durability {
	case "sync", "batch", "none":
	default:
		ps.add("durability", "unknown durability %q (known: sync, batch, none)", c.Durability)
	}
	c.validateProviders(&ps)
	c.checkModelRef(&ps, "default_model", c.DefaultModel)
	seenModels := map[string]bool{}
	for i, m := range c.Models {
		key := fmt.Sprintf("models[%d]", i)
		switch {
		case m.Name == "":
			ps.add(key+".name", "required")
		case seenModels[m.Name]:
			ps.add(key+".name", "duplicate model %q", m.Name)
		}
		seenModels[m.Name] = true
		for field, v := range map[string]float64{"input_per_million": m.InputPerMillion,
			"cached_input_per_million": m.CachedInputPerMillion, "output_per_million": m.OutputPerMillion} {
			if v < 0 {
				ps.add(key+"."+field, "must not be negative, got %g", v)
			}
		}
	}
	c.validateAgents(&ps)
	c.validatePrompts(&ps)
	c.validateMCP(&ps)
	if c.Permissions.Mode != "" {
		if _, err := toolsys.ParseMode(c.Permissions.Mode); err != nil {
			ps.add("permissions.mode", "%v", err)
		}
	}
	for name, rules := range map[string][]string{"allow": c.Permissions.Allow, "deny": c.Permissions.Deny} {
		for i, r := range rules {
			if _, err := toolsys.ParseRule(r); err != nil {
				ps.add(fmt.Sprintf("permissions.%s[%d]", name, i), "%v", err)
			}
		}
	}
	if c.Permissions.ApprovalTimeout < 0 {
		ps.add("permissions.approval_timeout", "must not be negative, got %v", c.Permissions.ApprovalTimeout)
	}
	validateLimits(&ps, "limits", c.Limits, true)
	if c.Retry.MaxAttempts < 0 {
		ps.add("retry.max_attempts", "must not be negative, got %d (1 disables retrying)", c.Retry.MaxAttempts)
	}
	if c.Retry.MaxRetryAfter < 0 {
		ps.add("retry.max_retry_after", "must not be negative, got %v", c.Retry.MaxRetryAfter)
	}
	c.validateSandbox(&ps)
	c.validateCompaction(&ps)
	c.validateSubAgents(&ps)
	if c.Knowledge.MaxResults < 0 {
		ps.add("knowledge.max_results", "must not be negative, got %d", c.Knowledge.MaxResults)
	}
	for i, h := range c.WebFetch.AllowedHosts {
		if !fetchHostRE.MatchString(h) {
			ps.add(fmt.Sprintf("web_fetch.allowed_hosts[%d]", i), "%q: want a host name (docs.example.com), *.domain for its subdomains, or * for any host", h)
		}
	}
	validateSchedules(&ps, c.Schedules)
	validateServe(&ps, c.Serve)
	validateWASM(&ps, c.WASM)
	validateEviction(&ps, c.Knowledge.Eviction)
	validateMemoryTools(&ps, c.MemoryTools)
	validateWebSearch(&ps, c.WebSearch)
	return ps
}

// validateWASM checks the wasm section.
func validateWASM(ps *problems, w WASM) {
	if w.MemoryLimitPages > wasm.MaxMemoryLimitPages {
		ps.add("wasm.memory_limit_pages", "%d is more than WebAssembly can address (at most %d pages of 64 KiB)", w.MemoryLimitPages, wasm.MaxMemoryLimitPages)
	}
	if w.Timeout < 0 {
		ps.add("wasm.timeout", "must not be negative, got %v", w.Timeout)
	}
	if w.OutputLimit < 0 {
		ps.add("wasm.output_limit", "must not be negative, got %d", w.OutputLimit)
	}
}

// validateServe checks the serve section with the server's own parsers.
func validateServe(ps *problems, s Serve) {
	for i, o := range s.CORSOrigins {
		if _, err := httpapi.ParseOrigin(o); err != nil {
			ps.add(fmt.Sprintf("serve.cors_origins[%d]", i), "%v", err)
		}
	}
	for i, h := range s.AllowedHosts {
		if _, err := httpapi.ParseAllowedHost(h); err != nil {
			ps.add(fmt.Sprintf("serve.allowed_hosts[%d]", i), "%v", err)
		}
	}
	for field, d := range map[string]time.Duration{"read_header_timeout": s.ReadHeaderTimeout,
		"body_timeout": s.BodyTimeout, "idle_timeout": s.IdleTimeout} {
		if d < 0 {
			ps.add("serve."+field, "must not be negative, got %v", d)
		}
	}
	if s.MaxConnections < 0 {
		ps.add("serve.max_connections", "must not be negative, got %d", s.MaxConnections)
	}
}

func (c *Config) validateProviders(ps *problems) {
	seen := map[string]bool{}
	for i, p := range c.Providers {
		key := fmt.Sprintf("providers[%d]", i)
		switch {
		case !nameRE.MatchString(p.Name):
			ps.add(key+".name", "want 1 to 32 of [a-zA-Z0-9_-], got %q", p.Name)
		case seen[p.Name]:
			ps.add(key+".name", "duplicate provider %q", p.Name)
		}
		seen[p.Name] = true
		validateStructuredOutput(ps, key+".structured_output", p.StructuredOutput)
		switch p.Type {
		case TypeOpenAI:
			if p.BaseURL != "" {
				if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					ps.add(key+".base_url", "want an http or https URL, got %q", p.BaseURL)
				}
			}
			if p.APIKeyEnv != "" && !envNameRE.MatchString(p.APIKeyEnv) || keyLikeRE.MatchString(p.APIKeyEnv) {
				ps.add(key+".api_key_env", "want the NAME of an environment variable (such as OPENAI_API_KEY), never the key itself")
			}
			if p.Timeout < 0 {
				ps.add(key+".timeout", "must not be negative, got %v", p.Timeout)
			}
			if p.Script != "" {
				ps.add(key+".script", "only for type %s", TypeScripted)
			}
		case TypeScripted:
			for field, set := range map[string]bool{"base_url": p.BaseURL != "", "api_key_env": p.APIKeyEnv != "", "timeout": p.Timeout != 0} {
				if set {
					ps.add(key+"."+field, "only for type %s", TypeOpenAI)
				}
			}
			if p.Script != "" {
				if _, err := scripted.LoadFile(p.Script); err != nil {
					ps.add(key+".script", "%v", err)
				}
			}
		case "":
			ps.add(key+".type", "required (known: %s, %s)", TypeOpenAI, TypeScripted)
		default:
			ps.add(key+".type", "unknown provider type %q (known: %s, %s)", p.Type, TypeOpenAI, TypeScripted)
		}
	}
}

// checkModelRef checks a "provider/model" reference.
func (c *Config) checkModelRef(ps *problems, key, ref string) {
	name, model, ok := strings.Cut(ref, "/")
	if !ok {
		ps.add(key, "want \"provider/model\", got %q", ref)
		return
	}
	p := c.provider(name)
	if p == nil {
		names := make([]string, len(c.Providers))
		for i, p := range c.Providers {
			names[i] = p.Name
		}
		ps.add(key, "unknown provider %q (known: %s)", name, strings.Join(names, ", "))
		return
	}
	if model == "" && p.DefaultModel == "" && p.Type != TypeScripted {
		ps.add(key, "%q names no model and provider %s has no default_model", ref, name)
	}
	if p.Type == TypeScripted && model != "" && model != p.scriptedModel() {
		ps.add(key, "provider %s has no model %q (known: %s/%s)", name, model, name, p.scriptedModel())
	}
}

// scriptedModel is the one model a scripted provider answers as: its
// default_model, or scripted.DefaultModel.
func (p *Provider) scriptedModel() string {
	if p.DefaultModel != "" {
		return p.DefaultModel
	}
	return scripted.DefaultModel
}

func (c *Config) validateAgents(ps *problems) {
	seen := map[string]bool{}
	for i, a := range c.Agents {
		key := fmt.Sprintf("agents[%d]", i)
		switch {
		case !agentRE.MatchString(a.Name):
			ps.add(key+".name", "want 1 to 64 of [a-zA-Z0-9_.-], got %q", a.Name)
		case seen[a.Name]:
			ps.add(key+".name", "duplicate agent %q", a.Name)
		}
		seen[a.Name] = true
		if _, err := template.New(a.Name).Option("missingkey=error").Parse(a.Prompt); err != nil {
			ps.add(key+".prompt", "%v", err)
		}
		if a.Model != "" {
			c.checkModelRef(ps, key+".model", a.Model)
		}
		for j, pattern := range a.Tools {
			if _, err := path.Match(pattern, ""); err != nil || pattern == "" {
				ps.add(fmt.Sprintf("%s.tools[%d]", key, j), "invalid tool pattern %q", pattern)
			}
		}
		validateLimits(ps, key+".limits", a.Limits, false)
		validateParams(ps, key+".params", a.Params)
		validateStructuredOutput(ps, key+".structured_output", a.StructuredOutput)
		if a.Retrieve && !c.Knowledge.Enabled {
			ps.add(key+".retrieve", "no knowledge base is configured: set knowledge.enabled: true")
		}
	}
	if c.DefaultAgent != "" && !seen[c.DefaultAgent] && !(len(c.Agents) == 0 && c.DefaultAgent == "default") {
		names := make([]string, len(c.Agents))
		for i, a := range c.Agents {
			names[i] = a.Name
		}
		if len(names) == 0 {
			names = []string{"default"}
		}
		ps.add("default_agent", "unknown agent %q (known: %s)", c.DefaultAgent, strings.Join(names, ", "))
	}
}

// validateCompaction checks the compaction section.
func (c *Config) validateCompaction(ps *problems) {
	cp := c.Compaction
	if cp.ContextWindow < 0 {
		ps.add("compaction.context_window", "must not be negative, got %d", cp.ContextWindow)
	}
	if cp.KeepRecent < 0 {
		ps.add("compaction.keep_recent", "must not be negative, got %d", cp.KeepRecent)
	}
	if cp.SummaryModel != "" {
		c.checkModelRef(ps, "compaction.summary_model", cp.SummaryModel)
	}
	if cp.ContextWindow > 0 {
		reserved := orDefault(cp.ReservedOutput, memory.DefaultReservedOutput)
		buffer := orDefault(cp.Buffer, memory.DefaultBuffer)
		if cp.ContextWindow <= reserved+buffer {
			ps.add("compaction.context_window", "%d leaves no room for the history after reserved_output (%d) and buffer (%d)",
				cp.ContextWindow, reserved, buffer)
		}
	}
}

// orDefault is v, or def when v is zero, or 0 when v is negative.
func orDefault(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// validateSubAgents checks the sub_agents section.
func (c *Config) validateSubAgents(ps *problems) {
	sa := c.SubAgents
	negative := []struct {
		key string
		bad bool
	}{
		{"max_depth", sa.MaxDepth < 0}, {"max_concurrent", sa.MaxConcurrent < 0},
		{"budget.max_tokens", sa.Budget.MaxTokens < 0}, {"budget.max_cost", sa.Budget.MaxCost < 0},
		{"budget.max_time", sa.Budget.MaxTime < 0}, {"budget.max_round_trips", sa.Budget.MaxRoundTrips < 0},
	}
	for _, n := range negative {
		if n.bad {
			ps.add("sub_agents."+n.key, "must not be negative")
		}
	}
}

func (c *Config) validateMCP(ps *problems) {
	seen := map[string]bool{}
	for i, s := range c.MCPServers {
		key := fmt.Sprintf("mcp_servers[%d]", i)
		switch {
		case !nameRE.MatchString(s.Name):
			ps.add(key+".name", "want 1 to 32 of [a-zA-Z0-9_-], got %q", s.Name)
		case seen[s.Name]:
			ps.add(key+".name", "duplicate server %q", s.Name)
		}
		seen[s.Name] = true
		switch {
		case s.Command == "" && s.URL == "":
			ps.add(key, "set command (a stdio server) or url (an HTTP server)")
		case s.Command != "" && s.URL != "":
			ps.add(key, "set command or url, not both")
		case s.Command != "":
			for field, set := range map[string]bool{"headers": len(s.Headers) > 0, "bearer_token_env": s.BearerTokenEnv != "", "bearer_token": s.BearerToken != "", "oauth": s.OAuth != nil} {
				if set {
					ps.add(key+"."+field, "only for a server with url")
				}
			}
		default:
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				ps.add(key+".url", "want an http or https URL, got %q", s.URL)
			}
			for field, set := range map[string]bool{"args": len(s.Args) > 0, "env": len(s.Env) > 0, "dir": s.Dir != ""} {
				if set {
					ps.add(key+"."+field, "only for a server with command")
				}
			}
		}
		for j, kv := range s.Env {
			if k, _, ok := strings.Cut(kv, "="); !ok || !envNameRE.MatchString(k) {
				ps.add(fmt.Sprintf("%s.env[%d]", key, j), "want KEY=value, got %q", kv)
			}
		}
		if s.BearerTokenEnv != "" && (!envNameRE.MatchString(s.BearerTokenEnv) || keyLikeRE.MatchString(s.BearerTokenEnv)) {
			ps.add(key+".bearer_token_env", "want the NAME of an environment variable, never the token itself")
		}
		validateMCPCredentials(ps, key, s)
		if _, err := toolsys.ParsePermission(s.Permission); err != nil {
			ps.add(key+".permission", "%v", err)
		}
		if s.CallTimeout < 0 {
			ps.add(key+".call_timeout", "must not be negative, got %v", s.CallTimeout)
		}
		if s.StartupTimeout < 0 {
			ps.add(key+".startup_timeout", "must not be negative, got %v", s.StartupTimeout)
		}
	}
}

// validateLimits checks limits at key; global says whether they are the
// global limits (which alone may set mid_turn).
func validateLimits(ps *problems, key string, l Limits, global bool) {
	for field, v := range map[string]int64{"max_round_trips": int64(l.MaxRoundTrips),
		"max_parallel_tools": int64(l.MaxParallelTools), "max_tokens": l.MaxTokens} {
		if v < 0 {
			ps.add(key+"."+field, "must not be negative, got %d", v)
		}
	}
	if l.ToolTimeout < 0 {
		ps.add(key+".tool_timeout", "must not be negative, got %v", l.ToolTimeout)
	}
	if l.MaxCost < 0 {
		ps.add(key+".max_cost", "must not be negative, got %g", l.MaxCost)
	}
	switch {
	case !global && l.MidTurn != "":
		ps.add(key+".mid_turn", "set mid_turn in the global limits only")
	case global:
		if _, err := parseMidTurn(l.MidTurn); err != nil {
			ps.add(key+".mid_turn", "%v", err)
		}
	}
}
