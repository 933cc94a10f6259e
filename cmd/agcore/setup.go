package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/toolsys"
)

// shutdownTimeout bounds the wait for the turns in flight when a command
// ends.
const shutdownTimeout = 10 * time.Second

// modelFlags are the flags that point a command at a model endpoint.
type modelFlags struct {
	model, baseURL, apiKey, workspace string
	noStream                          bool
}

// overrides returns the flags as configuration overrides.
func (f modelFlags) overrides() config.Overrides {
	return config.Overrides{Model: f.model, BaseURL: f.baseURL, APIKey: f.apiKey, Workspace: f.workspace, NoStream: f.noStream}
}

// permissionFlags are the flags that set which tool calls run without
// asking.
type permissionFlags struct {
	mode        string
	allow, deny []string
}

// addPermissionFlags adds --allow and --deny, and --permission-mode unless
// the command has its own (serve).
func addPermissionFlags(cmd *cobra.Command, f *permissionFlags, mode bool) {
	fs := cmd.Flags()
	if mode {
		fs.StringVar(&f.mode, "permission-mode", "", "tool permission mode: ask, accept-edits, read-only or bypass (default: the configuration's permissions.mode, else "+config.DefaultPermissionMode+")")
	}
	fs.StringArrayVar(&f.allow, "allow", nil, `permission rule of calls that run without asking, such as 'bash(go test **)' or 'write_file(docs/**)' (repeatable; added to permissions.allow)`)
	fs.StringArrayVar(&f.deny, "deny", nil, `permission rule of calls refused in every mode, such as 'bash(git push *)' (repeatable; added to permissions.deny)`)
}

// add returns o with the flags' permission overrides.
func (f permissionFlags) add(o config.Overrides) config.Overrides {
	if f.mode != "" {
		o.PermissionMode = f.mode
	}
	o.Allow, o.Deny = f.allow, f.deny
	return o
}

// newApprover returns the approver of cmd (run, chat): it asks when
// standard input and standard output are terminals, and refuses otherwise.
func (a *app) newApprover(cmd *cobra.Command) *approver {
	why := ""
	switch {
	case !a.isTerminal(cmd.InOrStdin()):
		why = "standard input is not a terminal"
	case !a.isTerminal(cmd.OutOrStdout()):
		why = "standard output is not a terminal"
	}
	return newApprover(why, cmd.ErrOrStderr(), a.redactor)
}

// loadConfig resolves the configuration: the defaults, the file (--config,
// $AGCORE_CONFIG, or the XDG location when it exists), the environment,
// then the flags in o and --data-dir. A configuration that is not valid is
// an error that exits with exitUsage.
func (a *app) loadConfig(o config.Overrides) (*config.Config, error) {
	cfg := config.Default()
	if path := config.Path(a.configPath, a.getenv); path != "" {
		var err error
		if cfg, err = config.Load(path); err != nil {
			return nil, &usageError{err}
		}
	}
	if err := cfg.ApplyEnv(a.getenv); err != nil {
		return nil, &usageError{err}
	}
	if o.DataDir == "" {
		o.DataDir = a.dataDir
	}
	if err := cfg.Apply(o); err != nil {
		return nil, &usageError{err}
	}
	if cfg.DataDir == "" {
		dir, err := config.DataDirFor(a.getenv)
		if err != nil {
			return nil, &usageError{err}
		}
		cfg.DataDir = dir
	}
	return cfg, nil
}

// startRuntime starts a runtime journaling into cfg's data directory, whose
// calls that need approval approver answers (nil refuses them), and waits
// for its MCP servers (see waitMCP; warnings go to warn). stop shuts it
// down, waiting for the turns in flight a bounded time, and releases what
// the configuration opened.
func (a *app) startRuntime(ctx context.Context, cfg *config.Config, approver toolsys.Approver, warn io.Writer) (rt *actors.Runtime, stop func() error, err error) {
	built, err := config.Build(ctx, cfg, config.BuildOptions{Getenv: a.getenv, Logger: runtimeLogger(a.log), Redactor: a.redactor})
	if err != nil {
		return nil, nil, err
	}
	built.Runtime.Approver = approver
	tel, err := a.setupOTel(ctx, false)
	if err != nil {
		_ = built.Close()
		return nil, nil, err
	}
	tel.apply(&built.Runtime)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		tel.close(ctx, a.log)
		_ = built.Close()
		return nil, nil, fmt.Errorf("data directory: %w", err)
	}
	if rt, err = actors.New(built.Runtime); err != nil {
		tel.close(ctx, a.log)
		_ = built.Close()
		return nil, nil, err
	}
	stop = func() error {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		err := errors.Join(rt.Shutdown(sctx), built.Close())
		tel.close(ctx, a.log)
		return err
	}
	if err := waitRuntimeMCP(ctx, rt, cfg, warn); err != nil {
		return nil, nil, withStop(err, stop)
	}
	return rt, stop, nil
}

// openSession starts the runtime of cfg (see startRuntime) and opens the session id, a new
// session when id is empty. stop shuts the runtime down; on error nothing is
// left running.
func (a *app) openSession(ctx context.Context, cfg *config.Config, id string, approver toolsys.Approver, warn io.Writer) (sess *actors.Session, sessionID string, stop func() error, err error) {
	rt, stop, err := a.startRuntime(ctx, cfg, approver, warn)
	if err != nil {
		return nil, "", nil, err
	}
	if id == "" {
		id = newSessionID(time.Now())
	}
	if sess, err = rt.Open(ctx, id); err != nil {
		return nil, "", nil, withStop(err, stop)
	}
	return sess, id, stop, nil
}

// newSessionID returns a fresh session id that sorts by creation time:
// "20250102-150405-1a2b3c".
func newSessionID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// turnErr is the error a command reports for a turn that did not
// complete, naming the turn from 1 as every output for people does (the
// journal counts from 0); nil for a completed turn.
func turnErr(e messages.TurnEnded) error {
	n := e.Turn + 1
	switch e.Outcome {
	case messages.OutcomeCompleted:
		return nil
	case messages.OutcomeCancelled:
		if e.Reason == "" {
			return fmt.Errorf("turn %d cancelled", n)
		}
		return fmt.Errorf("turn %d cancelled: %s", n, e.Reason)
	case messages.OutcomeLimit:
		return fmt.Errorf("turn %d stopped at a limit: %s", n, e.Reason)
	default:
		return fmt.Errorf("turn %d %s: %s", n, e.Outcome, e.Reason)
	}
}

// runtimeLogger is the logger of a runtime the command line starts: at
// the default level (info) it shows warnings and errors only, so that the
// actor system's lifecycle notes do not mix with a command's output;
// --log-level debug shows everything.
func runtimeLogger(log zerolog.Logger) zerolog.Logger {
	l := component(log, "runtime")
	if l.GetLevel() == zerolog.InfoLevel {
		l = l.Level(zerolog.WarnLevel)
	}
	return l
}
