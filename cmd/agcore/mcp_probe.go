package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/toolsys/mcp"
)

// mcpTestFlags are the flags of `agcore mcp test`.
type mcpTestFlags struct {
	headers             []string
	bearerEnv, clientID string
	call, args          string
	port                int
	noAuth              bool
	timeout             time.Duration
}

// newMCPTestCommand returns `agcore mcp test`.
func newMCPTestCommand(a *app) *cobra.Command {
	var f mcpTestFlags
	cmd := &cobra.Command{
		Use:   "test NAME|URL|COMMAND [ARGS...]",
		Short: "Connect to one MCP server and show its capabilities, tools, resources and prompts",
		Long: `Connect to one MCP server, as agcore would, and print what it offers: its
name and protocol version, its capabilities, tools, resources and prompts.

The server is a name from mcp_servers in the configuration file (with its
headers, token or oauth settings), an http(s) URL, or a command with its
arguments (a stdio server).

When an HTTP server answers 401, the MCP authorization flow runs: the
authorization URL is printed, and the browser's redirect is received on a
listener bound to 127.0.0.1. For a configured server the tokens are stored in
the data directory (mcp-oauth/NAME.json, mode 0600), where later runs, chat
and serve find and refresh them. For a URL they are kept for this run only.

With --call, one tool is called and its result printed; a question the server
asks meanwhile (elicitation) is asked on the terminal.

Flags go before NAME|URL|COMMAND: what follows a command is its own.`,
		Example: `  agcore mcp test docs                      # a server of the configuration file
  agcore mcp test https://mcp.example.com/mcp
  agcore mcp test npx -y @modelcontextprotocol/server-everything
  agcore mcp test --call echo --args '{"message":"hi"}' http://127.0.0.1:3001/mcp`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runMCPTest(cmd, a, f, args) },
	}
	fl := cmd.Flags()
	fl.SetInterspersed(false) // flags after COMMAND belong to it
	fl.StringArrayVar(&f.headers, "header", nil, "header sent to a URL server, as 'Name: value' (repeatable)")
	fl.StringVar(&f.bearerEnv, "bearer-token-env", "", "environment variable holding a bearer token for a URL server")
	fl.StringVar(&f.clientID, "client-id", "", "OAuth client id registered for a URL server (default: dynamic registration)")
	fl.IntVar(&f.port, "redirect-port", 0, "port of the OAuth redirect listener on 127.0.0.1 (default: a free port)")
	fl.BoolVar(&f.noAuth, "no-auth", false, "do not run the OAuth flow for a URL server")
	fl.StringVar(&f.call, "call", "", "call this tool and print its result")
	fl.StringVar(&f.args, "args", "{}", "JSON arguments of --call")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Minute, "bound on the whole test, authorization included")
	return cmd
}

// runMCPTest connects to the server args name and prints what it offers.
func runMCPTest(cmd *cobra.Command, a *app, f mcpTestFlags, args []string) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
	defer cancel()
	out := cmd.OutOrStdout()
	authz := &mcp.LoopbackAuthorizer{Out: cmd.ErrOrStderr(), Port: f.port}
	var elicit mcp.ElicitFunc
	if a.isTerminal(cmd.InOrStdin()) && a.isTerminal(cmd.OutOrStdout()) {
		elicit = newElicitPrompt(cmd.InOrStdin(), cmd.ErrOrStderr()).ask
	}
	sc, err := a.mcpTestServer(ctx, f, args, authz, elicit)
	if err != nil {
		return err
	}
	if sc.InitTimeout == 0 {
		sc.InitTimeout = f.timeout // the authorization waits for a person
	}
	c, err := mcp.Connect(ctx, sc, mcp.Options{Logger: component(a.log, "mcp"), ClientVersion: versionString()})
	if err != nil {
		if errors.Is(err, mcp.ErrAuthorizationRequired) {
			return err
		}
		return fmt.Errorf("mcp test %s: %w", args[0], err)
	}
	defer c.Close()
	printMCPServer(out, c)
	if f.call == "" {
		return nil
	}
	if !json.Valid([]byte(f.args)) {
		return &usageError{fmt.Errorf("--args: not valid JSON: %s", f.args)}
	}
	res, err := c.CallTool(ctx, f.call, json.RawMessage(f.args))
	if err != nil {
		return err
	}
	r := mcp.ResultFromMCP(res)
	fmt.Fprintf(out, "\ncall %s", f.call)
	if r.IsError {
		fmt.Fprint(out, " (error)")
	}
	fmt.Fprintf(out, ":\n%s\n", a.redactor.Content(r.Content))
	return nil
}

// mcpTestServer resolves the argument of `mcp test`: a configured server,
// a URL or a command.
func (a *app) mcpTestServer(ctx context.Context, f mcpTestFlags, args []string, authz mcp.Authorizer, elicit mcp.ElicitFunc) (mcp.ServerConfig, error) {
	target := args[0]
	if len(args) == 1 && !strings.Contains(target, "://") {
		cfg, err := a.loadConfig(config.Overrides{})
		if err != nil {
			return mcp.ServerConfig{}, err
		}
		if slices.ContainsFunc(cfg.MCPServers, func(s config.MCPServer) bool { return s.Name == target }) {
			built, err := config.Build(ctx, cfg, config.BuildOptions{Getenv: a.getenv, Logger: a.log, Redactor: a.redactor,
				ToolsOnly: true, MCPAuthorizer: authz, MCPElicit: elicit})
			if err != nil {
				return mcp.ServerConfig{}, err
			}
			defer built.Close()
			for _, sc := range built.Runtime.MCPServers {
				if sc.Name == target {
					return sc, nil
				}
			}
		}
	}
	sc := mcp.ServerConfig{Name: "test", Elicit: elicit}
	if u, err := url.Parse(target); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		if len(args) > 1 {
			return sc, &usageError{fmt.Errorf("a URL takes no arguments: %q", args[1:])}
		}
		sc.URL = target
		sc.Headers = map[string]string{}
		for _, h := range f.headers {
			name, value, ok := strings.Cut(h, ":")
			if !ok || strings.TrimSpace(name) == "" {
				return sc, &usageError{fmt.Errorf("--header %q: want 'Name: value'", h)}
			}
			sc.Headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
			a.redactor.Add(strings.TrimSpace(value), "")
		}
		if f.bearerEnv != "" {
			if sc.BearerToken = a.getenv(f.bearerEnv); sc.BearerToken == "" {
				return sc, &usageError{fmt.Errorf("--bearer-token-env: the environment variable %s is empty", f.bearerEnv)}
			}
			a.redactor.Add(sc.BearerToken, "")
		}
		if !f.noAuth && sc.BearerToken == "" {
			sc.OAuth = &mcp.OAuthConfig{ClientID: f.clientID, Authorizer: authz, Redactor: a.redactor}
		}
		return sc, nil
	}
	if len(f.headers) > 0 || f.bearerEnv != "" || f.clientID != "" {
		return sc, &usageError{errors.New("--header, --bearer-token-env and --client-id are for a URL server")}
	}
	sc.Command, sc.Args = target, args[1:]
	return sc, nil
}

// printMCPServer prints the server's identity, capabilities, tools,
// resources and prompts.
func printMCPServer(out io.Writer, c *mcp.Client) {
	init := c.InitializeResult()
	name, version := "?", ""
	if init.ServerInfo != nil {
		name, version = init.ServerInfo.Name, init.ServerInfo.Version
	}
	fmt.Fprintf(out, "server        %s %s (protocol %s)\n", name, version, init.ProtocolVersion)
	fmt.Fprintf(out, "capabilities  %s\n", strings.Join(capabilityNames(init.Capabilities), ", "))
	if init.Instructions != "" {
		fmt.Fprintf(out, "instructions  %s\n", firstLine(init.Instructions))
	}
	tools := c.RemoteTools()
	fmt.Fprintf(out, "\ntools (%d)\n", len(tools))
	for _, t := range tools {
		fmt.Fprintf(out, "  %-28s %s\n", t.Name, firstLine(t.Description))
	}
	resources := c.Resources()
	fmt.Fprintf(out, "\nresources (%d)\n", len(resources))
	for _, r := range resources {
		fmt.Fprintf(out, "  %-28s %s %s\n", r.URI, r.Name, r.MIMEType)
	}
	prompts := c.Prompts()
	fmt.Fprintf(out, "\nprompts (%d)\n", len(prompts))
	for _, p := range prompts {
		var names []string
		for _, arg := range p.Arguments {
			names = append(names, arg.Name)
		}
		line := fmt.Sprintf("  %-28s %s", p.Name, firstLine(p.Description))
		if len(names) > 0 {
			line += " (arguments: " + strings.Join(names, ", ") + ")"
		}
		fmt.Fprintln(out, strings.TrimRight(line, " "))
	}
}

// capabilityNames lists what a server offers.
func capabilityNames(c *sdk.ServerCapabilities) []string {
	if c == nil {
		return []string{"none"}
	}
	var out []string
	add := func(on bool, name string) {
		if on {
			out = append(out, name)
		}
	}
	add(c.Tools != nil, "tools")
	if c.Resources != nil {
		name := "resources"
		if c.Resources.Subscribe {
			name += " (subscribe)"
		}
		out = append(out, name)
	}
	add(c.Prompts != nil, "prompts")
	add(c.Logging != nil, "logging")
	add(c.Completions != nil, "completions")
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// firstLine returns the first line of s, trimmed.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}
