package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/builtin"
	"github.com/agcore/agcore/toolsys/mcp"
)

// newMCPCommand returns `agcore mcp` and its `serve` and `test` subcommands.
func newMCPCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Model Context Protocol: serve agcore's tools, test a server",
		Example: `  agcore mcp serve --workspace ./project   # agcore's tools for another MCP client, on stdio
  agcore mcp test docs                       # connect to a server of the configuration file`,
		Args: unknownCommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newMCPServeCommand(a), newMCPTestCommand(a))
	return cmd
}

// mcpServeFlags are the flags of `agcore mcp serve`.
type mcpServeFlags struct {
	httpAddr, workspace, mode string
	allow, deny, hosts        []string
}

// newMCPServeCommand returns `agcore mcp serve`.
func newMCPServeCommand(a *app) *cobra.Command {
	var f mcpServeFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the built-in tools over MCP (stdio, or Streamable HTTP)",
		Long: `Serve agcore's built-in tools (read_file, write_file, edit_file, list_dir,
glob, grep, bash, bash_process, web_fetch) as an MCP server.

By default the server speaks MCP over stdin and stdout, as MCP clients expect
of a command they start; logs go to stderr. With --http it serves Streamable
HTTP on a loopback address instead, until interrupted.

Every call passes agcore's permission pipeline: deny rules, then the mode,
then allow rules. There is no one to ask for approval, so in ask mode only
read-only tools run unless an allow rule matches. File tools are confined to
the workspace (symlinks resolved), and web_fetch reaches only the hosts
given with --allow-host.`,
		Example: `  agcore mcp serve --workspace ./project
  agcore mcp serve --mode accept-edits --deny 'write_file(secrets/**)'
  agcore mcp serve --http 127.0.0.1:8931 --allow 'bash(git *)'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMCPServe(cmd, a, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.httpAddr, "http", "", "serve Streamable HTTP on this loopback address (127.0.0.1:PORT) instead of stdio")
	fl.StringVar(&f.workspace, "workspace", ".", "directory the file tools are confined to")
	fl.StringVar(&f.mode, "mode", "ask", "permission mode: ask, read-only, accept-edits or bypass")
	fl.StringArrayVar(&f.allow, "allow", nil, "allow rule, such as 'bash(git *)' (repeatable)")
	fl.StringArrayVar(&f.deny, "deny", nil, "deny rule, such as 'write_file(secrets/**)' (repeatable)")
	fl.StringArrayVar(&f.hosts, "allow-host", nil, "host web_fetch may reach ('*.example.com', '*' for any; repeatable)")
	return cmd
}

// runMCPServe builds the registry and serves it until the client leaves or
// the command is interrupted.
func runMCPServe(cmd *cobra.Command, a *app, f mcpServeFlags) error {
	ctx := cmd.Context()
	log := component(a.log, "mcp-serve")
	mode, err := toolsys.ParseMode(f.mode)
	if err != nil {
		return &usageError{err}
	}
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: mode, Allow: f.allow, Deny: f.deny,
		Remedy: "to run such calls, pass --mode (accept-edits or bypass) or an --allow rule that matches the call"})
	if err != nil {
		return &usageError{err}
	}
	dir, err := filepath.Abs(f.workspace)
	if err != nil {
		return &usageError{fmt.Errorf("--workspace: %w", err)}
	}
	ws, err := toolsys.NewWorkspace(dir)
	if err != nil {
		return &usageError{fmt.Errorf("--workspace: %w", err)}
	}
	defer ws.Close()
	procs := builtin.NewProcessManager(builtin.ProcessOptions{Logger: log})
	defer procs.Close()
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms, Logger: log})
	for _, t := range builtin.All(builtin.Options{Logger: log, Processes: procs}) {
		if err := reg.Register(t, toolsys.WithSource(toolsys.SourceBuiltin), toolsys.WithCategory("builtin")); err != nil {
			return err
		}
	}
	opts := mcp.ServeOptions{Workspace: ws, AllowedHosts: f.hosts, Logger: log}
	if f.httpAddr == "" {
		log.Info().Str("workspace", ws.Root()).Str("mode", mode.String()).Msg("serving MCP over stdio")
		t := &sdk.IOTransport{Reader: io.NopCloser(cmd.InOrStdin()), Writer: nopWriteCloser{cmd.OutOrStdout()}}
		return mcp.Serve(ctx, reg, opts, t)
	}
	return serveMCPHTTP(ctx, cmd.OutOrStdout(), f.httpAddr, mcp.HTTPHandler(reg, opts), log)
}

// serveMCPHTTP listens on a loopback addr and serves h until ctx ends.
func serveMCPHTTP(ctx context.Context, out io.Writer, addr string, h http.Handler, log zerolog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return &usageError{fmt.Errorf("--http %q: %w", addr, err)}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return &usageError{fmt.Errorf("--http %q: listen on a loopback address (127.0.0.1:PORT)", addr)}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "MCP server listening on http://%s/\n", ln.Addr())
	log.Info().Str("addr", ln.Addr().String()).Msg("serving MCP over Streamable HTTP; interrupt to stop")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// nopWriteCloser is a writer whose Close does nothing: stdout stays open.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
