package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/builtin"
	"github.com/agcore/agcore/toolsys/sandbox"
)

// fileTools returns a registry of the built-in file tools behind perms:
// list_dir, read_file, write_file, edit_file, glob and grep. All of them are
// confined to the call's workspace; none runs commands or reaches the
// network. Nil perms is the registry's fail-closed default (the writing
// tools need an approver).
func fileTools(log zerolog.Logger, perms *toolsys.Permissions) (*toolsys.Registry, error) {
	opts := builtin.Options{Logger: log}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms, Logger: log})
	for _, t := range []toolsys.Tool{
		toolsys.Bridge[builtin.ListDirParams](builtin.NewListDir(opts)),
		toolsys.Bridge[builtin.ReadFileParams](builtin.NewReadFile(opts)),
		toolsys.Bridge[builtin.WriteFileParams](builtin.NewWriteFile(opts)),
		toolsys.Bridge[builtin.EditFileParams](builtin.NewEditFile(opts)),
		toolsys.Bridge[builtin.GlobParams](builtin.NewGlob(opts)),
		toolsys.Bridge[builtin.GrepParams](builtin.NewGrep(opts)),
	} {
		if err := reg.Register(t, toolsys.WithSource(toolsys.SourceBuiltin), toolsys.WithCategory("files")); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// newToolsCmd returns `agcore tools` and its subcommands.
func newToolsCmd(a *app) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools agents can call, and show their schemas",
		Long: `List the tools of the configuration (the built-in tools, the WebAssembly
tools of the wasm folder and those of the configured MCP servers) with their
source, permission level, category and tags, and their statistics over the
sessions of the data directory; or print the JSON schema of one tool's
arguments, as the model sees it.`,
		Example: `  agcore tools list
  agcore tools schema read_file`,
		Args: unknownCommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().BoolVar(&jsonOut, "json", false, "print JSON instead of text")
	cmd.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: "List the tools with their source, permission, category and statistics",
			Long: `List every tool: name, source (builtin, wasm, mcp, runtime or schedule),
permission level, category, tags, and its calls, errors and average duration
over the sessions journaled in the data directory (blank when there is no
data directory yet). For the tools that run commands (bash, bash_process),
SANDBOX says whether this host confines them: "confined (landlock ABI N)",
or "unconfined" followed, below the table, by the reason and what the
sandbox mode does about it. A .wasm file of the wasm folder that does not
load is named on standard error, with the reason, and so is a SKILL.md of
the skills folder that does not parse, with its line.`,
			Example: "  agcore tools list\n  agcore tools list --json | jq -r .name",
			Args:    noArgs,
			RunE:    func(cmd *cobra.Command, _ []string) error { return listTools(cmd, a, jsonOut) },
		},
		&cobra.Command{
			Use:     "schema NAME",
			Short:   "Print the JSON schema of a tool's arguments",
			Long:    "Print the normalised JSON schema of a tool's arguments, exactly as it is sent to the model, indented.",
			Example: "  agcore tools schema read_file\n  agcore tools schema bash --json",
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) != 1 {
					return &usageError{fmt.Errorf("%s takes one tool name, got %d arguments", cmd.CommandPath(), len(args))}
				}
				return nil
			},
			RunE: func(cmd *cobra.Command, args []string) error { return toolSchema(cmd, a, args[0], jsonOut) },
		},
	)
	return cmd
}

// withTools builds the configured tools for f, those of the MCP servers
// included: it connects to each server and waits for it up to its
// startup_timeout (a server that is not ready is named on warn).
func (a *app) withTools(ctx context.Context, warn io.Writer, f func(*config.Config, *config.Built) error) error {
	cfg, err := a.loadConfig(config.Overrides{})
	if err != nil {
		return err
	}
	built, err := config.Build(ctx, cfg, config.BuildOptions{Getenv: a.getenv, Logger: a.log, Redactor: a.redactor, ToolsOnly: true})
	if err != nil {
		return err
	}
	defer built.Close()
	disconnect, err := connectMCP(ctx, cfg, built.Tools, a.getenv, component(a.log, "mcp"), warn)
	if err != nil {
		return err
	}
	defer disconnect()
	return f(cfg, built)
}

// runsCommands reports whether the built-in tool name runs commands in the
// sandbox.
func runsCommands(name string) bool { return name == "bash" || name == "bash_process" }

// toolInfo is a line of `tools list`.
type toolInfo struct {
	Name string `json:"name"`
	// Source is where the tool comes from: builtin, wasm, mcp, runtime or
	// schedule.
	Source     string   `json:"source"`
	Permission string   `json:"permission"`
	Category   string   `json:"category,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Idempotent bool     `json:"idempotent"`
	// Sandbox is "confined (landlock ABI N)" or "unconfined" for the
	// tools that run commands, empty for the others.
	Sandbox string `json:"sandbox,omitempty"`
	toolStats
}

// toolStats are a tool's calls over the journaled sessions.
type toolStats struct {
	Calls    int64         `json:"calls"`
	Errors   int64         `json:"errors"`
	Duration time.Duration `json:"total_duration_ns"`
}

func listTools(cmd *cobra.Command, a *app, jsonOut bool) error {
	return a.withTools(cmd.Context(), cmd.ErrOrStderr(), func(cfg *config.Config, built *config.Built) error {
		reg := built.Tools
		stats, statsErr := a.journalToolStats(cmd.Context())
		var list []toolInfo
		var sandboxed bool
		for _, name := range reg.Names() {
			info, _ := reg.Info(name)
			ti := toolInfo{Name: name, Source: info.Source.String(), Permission: info.Tool.Permission().String(), Category: info.Category,
				Tags: info.Tags, Idempotent: info.Tool.Idempotent(), toolStats: stats[name]}
			if runsCommands(name) {
				ti.Sandbox, sandboxed = confinementLabel(built.Sandbox.Status(cmd.Context())), true
			}
			list = append(list, ti)
		}
		for _, t := range actors.OwnTools(built.Runtime) {
			list = append(list, toolInfo{Name: t.Name(), Source: toolsys.SourceRuntime.String(), Permission: t.Permission().String(),
				Category: "agents", Idempotent: t.Idempotent(), toolStats: stats[t.Name()]})
		}
		out := cmd.OutOrStdout()
		if jsonOut {
			enc := json.NewEncoder(out)
			for _, t := range list {
				if err := enc.Encode(t); err != nil {
					return err
				}
			}
			return nil
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSOURCE\tPERMISSION\tCATEGORY\tTAGS\tCALLS\tERRORS\tAVG\tSANDBOX")
		for _, t := range list {
			avg := "-"
			if t.Calls > 0 {
				avg = formatDuration(t.Duration / time.Duration(t.Calls))
			}
			sb := t.Sandbox
			if sb == "" {
				sb = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", t.Name, t.Source, t.Permission, t.Category, strings.Join(t.Tags, ","), t.Calls, t.Errors, avg, sb)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if sandboxed {
			if note := sandboxNote(built.Sandbox.Status(cmd.Context()), built.Sandbox.Mode()); note != "" {
				fmt.Fprintf(out, "\n%s\n", note)
			}
		}
		if statsErr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "statistics unavailable: %v\n", statsErr)
		}
		if built.WASM != nil {
			for _, err := range built.WASM.Refused() {
				fmt.Fprintf(cmd.ErrOrStderr(), "left out: %v\n", err)
			}
		}
		if built.Skills != nil {
			for _, err := range built.Skills.Refused {
				fmt.Fprintf(cmd.ErrOrStderr(), "left out: %v\n", err)
			}
		}
		return nil
	})
}

// journalToolStats sums the tool results journaled in the data directory,
// by tool name. A data directory that does not exist yet has none.
func (a *app) journalToolStats(ctx context.Context) (map[string]toolStats, error) {
	stats := map[string]toolStats{}
	err := a.withJournal(ctx, func(j memory.Journal) error {
		for id, err := range j.Sessions(ctx) {
			if err != nil {
				return err
			}
			for e, err := range j.Read(ctx, id, 1) {
				if err != nil {
					return err
				}
				if r, ok := e.Event.(messages.ToolResult); ok {
					s := stats[r.Name]
					s.Calls++
					s.Duration += r.Duration
					if r.IsError {
						s.Errors++
					}
					stats[r.Name] = s
				}
			}
		}
		return nil
	})
	if err != nil && errors.Is(err, errNoDataDir) {
		return stats, nil
	}
	return stats, err
}

// sandboxNote explains an unconfined st under mode, below the table; ""
// when commands are confined.
func sandboxNote(st sandbox.Status, mode sandbox.Mode) string {
	switch {
	case st.Confined:
		return ""
	case mode == sandbox.Warn:
		return "sandbox: unconfined: " + st.Reason + "; commands run unconfined (sandbox.mode: warn)"
	}
	return "sandbox: unconfined: " + st.Reason + "; bash and bash_process refuse to run " +
		"(set sandbox.mode: warn to run commands unconfined)"
}

// confinementLabel is the SANDBOX column for st.
func confinementLabel(st sandbox.Status) string {
	if st.Confined {
		return st.String()
	}
	return "unconfined"
}

func toolSchema(cmd *cobra.Command, a *app, name string, jsonOut bool) error {
	return a.withTools(cmd.Context(), cmd.ErrOrStderr(), func(_ *config.Config, built *config.Built) error {
		reg := built.Tools
		names := reg.Names()
		t, ok := reg.Get(name)
		for _, own := range actors.OwnTools(built.Runtime) {
			names = append(names, own.Name())
			if !ok && own.Name() == name {
				t, ok = own, true
			}
		}
		if !ok {
			return &usageError{fmt.Errorf("no tool named %q (known: %s)", name, strings.Join(slices.Sorted(slices.Values(names)), ", "))}
		}
		out := cmd.OutOrStdout()
		if jsonOut {
			return json.NewEncoder(out).Encode(toolsys.Definition(t))
		}
		var b bytes.Buffer
		if err := json.Indent(&b, t.Schema(), "", "  "); err != nil {
			return fmt.Errorf("schema of %s: %w", name, err)
		}
		fmt.Fprintf(out, "%s — %s\n\n", t.Name(), oneLine(t.Description(), 200))
		_, err := fmt.Fprintf(out, "%s\n", b.String())
		return err
	})
}
