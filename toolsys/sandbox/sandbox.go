package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Sandbox confines commands with Landlock. It probes the host once, the
// first time its status is asked, by running a confined command; Check
// then says whether to confine a command, run it unconfined (Warn) or
// refuse it (Refuse), and Start starts a command confined. It is safe for
// concurrent use.
type Sandbox struct {
	cfg     Config
	invalid error // Config.Validate's verdict

	mu     sync.Mutex // held during the probe, so that there is one
	probed bool
	status Status
	goroot string // the Go toolchain's root, readable by commands; "" when none

	warn sync.Once
}

// New returns a sandbox with configuration cfg. It starts nothing: the
// host is probed on first use. An invalid cfg (see Config.Validate) makes
// a sandbox whose status is unconfined, naming the field.
func New(cfg Config) *Sandbox {
	cfg.AllowPorts = slices.Clone(cfg.AllowPorts)
	cfg.ExtraReadPaths = slices.Clone(cfg.ExtraReadPaths)
	cfg.ExtraWritePaths = slices.Clone(cfg.ExtraWritePaths)
	cfg.Env = slices.Clone(cfg.Env)
	return &Sandbox{cfg: cfg.withDefaults(), invalid: cfg.Validate()}
}

// Probe reports whether this program can confine commands with the zero
// Config, for a diagnostic such as `agcore doctor`: Status.String is the
// line to print. It runs one confined command, which takes about as long
// as starting this program and bash once.
func Probe(ctx context.Context) Status {
	return New(Config{}).Status(ctx)
}

// Mode returns the configured Mode.
func (s *Sandbox) Mode() Mode { return s.cfg.Mode }

// AllowPorts returns the TCP ports commands may connect to.
func (s *Sandbox) AllowPorts() []int { return slices.Clone(s.cfg.AllowPorts) }

// Status says whether commands run confined, probing the host the first
// time: it checks the kernel's Landlock ABI, then runs `bash -c "exit 0"`
// confined, which fails when the program does not call Main, when a
// seccomp filter forbids Landlock, or when bash cannot run under the
// rules. The answer is kept, except when ctx ends the probe.
func (s *Sandbox) Status(ctx context.Context) Status {
	st, _ := s.statusOrErr(ctx)
	return st
}

// statusOrErr is Status, and ctx's error when it cut the probe short.
func (s *Sandbox) statusOrErr(ctx context.Context) (Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.probed {
		return s.status, nil
	}
	st := s.probe(ctx)
	if err := ctx.Err(); err != nil && !st.Confined {
		return Status{Reason: "the probe was interrupted: " + err.Error()}, err
	}
	s.status, s.probed = st, true
	return st, nil
}

// Check says what to do with a command: run it confined (the status is
// Confined), run it unconfined (Warn mode; the first such call logs a
// warning), or refuse it (Refuse mode: an *UnavailableError). It returns
// ctx's error when ctx ends the probe.
func (s *Sandbox) Check(ctx context.Context) (Status, error) {
	st, err := s.statusOrErr(ctx)
	switch {
	case err != nil:
		return st, err
	case st.Confined:
		return st, nil
	case s.cfg.Mode == Warn:
		s.warn.Do(func() {
			s.cfg.Logger.Warn().Str("reason", st.Reason).Msg("commands run unconfined: they can read, write and connect wherever this process can")
		})
		return st, nil
	}
	return st, &UnavailableError{Reason: st.Reason}
}

// probe finds out whether commands can run confined; s.mu is held.
func (s *Sandbox) probe(ctx context.Context) Status {
	if s.invalid != nil {
		return Status{Reason: s.invalid.Error()}
	}
	if _, err := hostABI(); err != nil {
		return Status{Reason: err.Error()}
	}
	if s.cfg.Executable == "" && !mainCalled.Load() {
		return Status{Reason: fmt.Sprintf("%s does not call sandbox.Main first thing in main", s.executableName())}
	}
	s.goroot = findGOROOT()
	bash, err := exec.LookPath("bash")
	if err != nil {
		return Status{Reason: "bash is not on PATH"}
	}
	cmd := exec.Command(bash, "-c", "exit 0")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	ownGroup(cmd) // a helper that fails the probe is killed with whatever it started
	abi, release, err := s.start(ctx, cmd, "")
	if err != nil {
		if errors.Is(err, errNoAnswer) {
			return Status{Reason: fmt.Sprintf("%s does not call sandbox.Main first thing in main", s.executableName())}
		}
		return Status{Reason: err.Error()}
	}
	err = cmd.Wait()
	release()
	if err != nil {
		return Status{Reason: fmt.Sprintf("a confined bash did not run: %v", err)}
	}
	return Status{Confined: true, ABI: abi}
}

// executableName names the helper program in a reason.
func (s *Sandbox) executableName() string {
	if s.cfg.Executable != "" {
		return s.cfg.Executable
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return "this program"
}

// Start starts cmd confined: cmd.Dir as usual, Config.Env overridden by
// cmd.Env as its environment, its program
// able to read and execute the system directories, read and write
// workspace (if not empty), a private directory and the configured extra
// paths, and connect to the allowed TCP ports only. HOME and TMPDIR are set
// to two directories inside the private one, which is new for every
// command.
//
// Start rewrites cmd to run the helper (Path, Args, Env and ExtraFiles,
// which must be empty), and returns once the helper has confined itself
// and executed cmd's program, which keeps the helper's process id. After
// cmd.Wait, call release to remove the private directory. Start fails with
// an *UnavailableError when the host cannot confine commands (whatever the
// Mode: see Check), and with ctx's error when ctx ends first.
func (s *Sandbox) Start(ctx context.Context, cmd *exec.Cmd, workspace string) (release func(), err error) {
	st, err := s.statusOrErr(ctx)
	if err != nil {
		return nil, err
	}
	if !st.Confined {
		return nil, &UnavailableError{Reason: st.Reason}
	}
	_, release, err = s.start(ctx, cmd, workspace)
	return release, err
}

// start starts cmd through the helper and returns the ABI it reports.
func (s *Sandbox) start(ctx context.Context, cmd *exec.Cmd, workspace string) (abi int, release func(), err error) {
	if cmd.Err != nil {
		return 0, nil, cmd.Err
	}
	if cmd.Process != nil {
		return 0, nil, errors.New("sandbox: command already started")
	}
	if len(cmd.ExtraFiles) > 0 {
		return 0, nil, errors.New("sandbox: a confined command cannot take ExtraFiles")
	}
	if !filepath.IsAbs(cmd.Path) {
		return 0, nil, fmt.Errorf("sandbox: program %q is not an absolute path", cmd.Path)
	}
	if workspace != "" && !filepath.IsAbs(workspace) {
		return 0, nil, fmt.Errorf("sandbox: workspace %q is not an absolute path", workspace)
	}
	exe := s.cfg.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return 0, nil, fmt.Errorf("sandbox: find this program to re-execute: %w", err)
		}
	}
	priv, err := newPrivateDir()
	if err != nil {
		return 0, nil, err
	}
	release = func() { _ = priv.remove() }
	sp := s.spec(cmd, workspace, priv)
	specR, specW, err := os.Pipe()
	if err != nil {
		release()
		return 0, nil, fmt.Errorf("sandbox: %w", err)
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		_, _ = specR.Close(), specW.Close()
		release()
		return 0, nil, fmt.Errorf("sandbox: %w", err)
	}
	defer statR.Close()
	cmd.Path, cmd.Args, cmd.Env = exe, []string{exe, helperArg}, []string{helperEnv + "=" + helperValue}
	cmd.ExtraFiles = []*os.File{specR, statW} // fds 3 and 4: specFD, statusFD
	err = cmd.Start()
	_, _ = specR.Close(), statW.Close()
	if err != nil {
		_ = specW.Close()
		release()
		return 0, nil, fmt.Errorf("sandbox: start the helper %s: %w", exe, err)
	}
	abi, err = handshake(ctx, sp, specW, statR, s.cfg.StartTimeout)
	if err != nil {
		killStarted(cmd)
		_ = cmd.Wait()
		release()
		return 0, nil, err
	}
	return abi, release, nil
}

// handshake sends sp to the helper and reads its answer, for at most
// timeout or until ctx ends.
func handshake(ctx context.Context, sp spec, specW, statR *os.File, timeout time.Duration) (int, error) {
	data, err := sp.encode()
	if err != nil {
		_ = specW.Close()
		return 0, err
	}
	deadline := time.Now().Add(timeout)
	_ = specW.SetWriteDeadline(deadline)
	_ = statR.SetReadDeadline(deadline)
	stop := context.AfterFunc(ctx, func() {
		_ = specW.SetWriteDeadline(time.Now())
		_ = statR.SetReadDeadline(time.Now())
	})
	defer stop()
	// A helper that does not read its spec (no Main) makes the write fail
	// when it exits; its answer, or lack of one, says more.
	_, err = specW.Write(data)
	_ = specW.Close()
	var answer []byte
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		answer, err = io.ReadAll(io.LimitReader(statR, maxStatus))
	}
	switch {
	case err != nil && ctx.Err() != nil:
		// The wait was cut short by ctx; an answer read whole still counts,
		// since the command is running by then.
		return 0, context.Cause(ctx)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return 0, fmt.Errorf("sandbox: the helper did not answer within %s: the program does not call sandbox.Main first thing in main, or StartTimeout is too short", timeout)
	case err != nil:
		return 0, fmt.Errorf("sandbox: read the helper's answer: %w", err)
	}
	abi, err := parseStatus(answer)
	switch {
	case errors.Is(err, errNoAnswer):
		return 0, err
	case err != nil:
		return 0, fmt.Errorf("sandbox: the helper could not confine the command: %w", err)
	}
	return abi, nil
}

// spec is the helper's description of cmd: its program, arguments and
// environment (Config.Env, then cmd's, then HOME and TMPDIR in priv), and
// the paths and ports it may use.
func (s *Sandbox) spec(cmd *exec.Cmd, workspace string, priv privateDir) spec {
	env := slices.Clone(s.cfg.Env)
	for _, kv := range cmd.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		env = setEnv(env, name, value)
	}
	env = setEnv(env, "HOME", priv.home())
	env = setEnv(env, "TMPDIR", priv.tmp())
	read := systemReadPaths()
	if s.goroot != "" {
		read = append(read, s.goroot)
	}
	if real, err := filepath.EvalSymlinks(cmd.Path); err == nil {
		read = append(read, real)
	}
	read, list := readRules(read, hiddenPaths())
	read = append(read, s.cfg.ExtraReadPaths...)
	write := []string{priv.root, "/dev/null"}
	if workspace != "" {
		write = append(write, workspace)
	}
	write = append(write, s.cfg.ExtraWritePaths...)
	env = filterPath(env, append(slices.Clone(read), write...))
	return spec{Path: cmd.Path, Args: slices.Clone(cmd.Args), Env: env, Read: read, List: list, Write: write, Ports: slices.Clone(s.cfg.AllowPorts)}
}

// filterPath keeps in env's PATH only the directories beneath allowed ones
// (and relative entries, which follow the working directory): a shell
// finds a program it may not execute (stat is not confined) and stops
// there, where it should go on to the next directory.
func filterPath(env []string, allowed []string) []string {
	i := slices.IndexFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
	if i < 0 {
		return env
	}
	var keep []string
	for _, dir := range filepath.SplitList(strings.TrimPrefix(env[i], "PATH=")) {
		real := dir
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			real = r
		}
		if !filepath.IsAbs(dir) || slices.ContainsFunc(allowed, func(a string) bool { return beneath(real, a) }) {
			keep = append(keep, dir)
		}
	}
	env = slices.Clone(env)
	env[i] = "PATH=" + strings.Join(keep, string(filepath.ListSeparator))
	return env
}

// beneath reports whether p is root or lies beneath it.
func beneath(p, root string) bool {
	p, root = filepath.Clean(p), filepath.Clean(root)
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// setEnv returns env with name set to value, replacing every earlier
// definition.
func setEnv(env []string, name, value string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(out, name+"="+value)
}
