package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/internal/logging"
	"github.com/agcore/agcore/redact"
)

// Exit codes of the agcore command.
const (
	exitOK    = 0
	exitError = 1 // the command failed
	exitUsage = 2 // the command line is wrong
	// exitInterrupted is the shell's code for a command stopped by SIGINT.
	exitInterrupted = 130
)

// app is what every command shares: the output streams, the environment and
// the logger built from the global flags. Commands receive it explicitly;
// nothing is global.
type app struct {
	stdout, stderr io.Writer
	getenv         func(string) string

	logLevel, logFormat string
	// configPath and dataDir are the global --config and --data-dir flags.
	configPath, dataDir string
	// log is set by the root command before any subcommand runs.
	log zerolog.Logger
	// redactor masks every credential the process knows (the configured
	// API keys and tokens, added as the configuration is built) and every
	// credential of a known shape, in the logs and the command output.
	redactor *redact.Redactor
	// rawStderr is stderr before masking, for the logger, which masks each
	// event as JSON before it is formatted.
	rawStderr io.Writer
	// terminal reports whether a standard stream (stdin, stdout) is a
	// terminal, which decides whether run and chat ask for approvals. Nil
	// means asking the operating system.
	terminal func(stream any) bool
}

// usageError marks an error in the command line (unknown command, bad flag,
// wrong arguments); it exits with exitUsage.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }

func (e *usageError) Unwrap() error { return e.err }

// run executes the command line args and returns the exit code. Command
// output goes to stdout, logs and errors to stderr; getenv reads the
// environment. Cancelling ctx (SIGINT, SIGTERM) stops long-running commands.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	return runIO(ctx, args, os.Stdin, stdout, stderr, getenv)
}

// runIO is run with stdin as the commands' standard input.
func runIO(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return newApp(stdout, stderr, getenv).execute(ctx, args, stdin)
}

// newApp returns the app of a command line writing to stdout and stderr,
// both masked by a new redactor. The command's messages and the logger
// share stderr through one lock.
func newApp(stdout, stderr io.Writer, getenv func(string) string) *app {
	r := redact.New()
	stderr = locked(stderr)
	return &app{stdout: masked(stdout, r), stderr: masked(stderr, r), rawStderr: stderr, getenv: getenv,
		log: zerolog.Nop(), redactor: r}
}

// execute runs the command line args with stdin as the commands' standard
// input, and returns the exit code.
func (a *app) execute(ctx context.Context, args []string, stdin io.Reader) int {
	stdout, stderr := a.stdout, a.stderr
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if ctx.Err() != nil && errors.Is(err, context.Cause(ctx)) {
		fmt.Fprintln(stderr, "agcore: interrupted")
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "agcore: %s\n", userMessage(err))
	code := exitCode(err)
	if _, ok := errors.AsType[*usageError](err); ok && !errors.Is(err, config.ErrInvalid) {
		fmt.Fprintln(stderr, "Run 'agcore --help' for usage.")
	}
	return code
}

// newRootCmd returns the agcore command with its subcommands.
func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "agcore",
		Short: "A supervised actor runtime for LLM agents",
		Long: `agcore runs LLM agents as supervised actors: every session is an actor
that exchanges typed messages, supervises its model and tool calls, and keeps
a durable journal.

Try it offline, without an API key:

  agcore demo

Settings come from flags, then the environment (OPENAI_API_KEY,
OPENAI_BASE_URL, OPENAI_MODEL, AGCORE_DATA_DIR, AGCORE_CONFIG), then the
configuration file (--config; default $XDG_CONFIG_HOME/agcore/config.yaml
when it exists; see docs/agcore.example.yaml), then the defaults.

Exit codes: 0 success, 1 failure, 2 usage or configuration error,
130 interrupted.`,
		Example: `  agcore demo --sessions 8
  agcore run --model mock/scripted "Summarise this project"
  OPENAI_API_KEY=sk-... agcore chat
  agcore sessions list
  agcore doctor
  agcore backup --output agcore.backup
  agcore tools list
  agcore --config ./agcore.yaml run "What does main.go do?"`,
		Args: unknownCommand,
		// SuggestionsFor, unlike cobra's own check, does not default this.
		SuggestionsMinimumDistance: 2,
		SilenceErrors:              true,
		SilenceUsage:               true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
		PersistentPreRunE: func(*cobra.Command, []string) error {
			log, err := logging.New(logging.Options{Writer: a.rawStderr, Level: a.logLevel, Format: a.logFormat, Redactor: a.redactor})
			if err != nil {
				return &usageError{err}
			}
			a.log = log
			return nil
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.logLevel, "log-level", "info", "minimum log level: debug, info, warn or error")
	pf.StringVar(&a.logFormat, "log-format", "auto", "log format: json, console, or auto (console on a terminal, JSON otherwise)")
	pf.StringVar(&a.configPath, "config", "", "configuration file (env AGCORE_CONFIG; default $XDG_CONFIG_HOME/agcore/config.yaml if present)")
	pf.StringVar(&a.dataDir, "data-dir", "", "directory of the session journals (env AGCORE_DATA_DIR; default $XDG_DATA_HOME/agcore)")
	root.AddCommand(
		newDemoCmd(a),
		newRunCmd(a),
		newChatCmd(a),
		newSessionsCmd(a),
		newKnowledgeCmd(a),
		newScheduleCmd(a),
		newToolsCmd(a),
		newMockLLMCmd(a),
		newBenchCmd(a),
		newServeCmd(a),
		newClusterCmd(a),
		newMCPCommand(a),
		newDoctorCmd(a),
		newChaosCmd(a),
		newBackupCmd(a),
		newRestoreCmd(a),
		newVersionCmd(),
	)
	return root
}

// unknownCommand rejects arguments to a command that takes none, which for
// the root command means a misspelt subcommand; it suggests close names.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if sugg := cmd.SuggestionsFor(args[0]); len(sugg) > 0 {
		msg += "; did you mean " + strings.Join(sugg, " or ") + "?"
	}
	return &usageError{errors.New(msg)}
}

// noArgs rejects positional arguments to a command that takes none.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)}
	}
	return nil
}

// component narrows log to one part of the program.
func component(log zerolog.Logger, name string) zerolog.Logger {
	return log.With().Str("component", name).Logger()
}
