package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys/sandbox"
)

// Errors of the ProcessManager.
var (
	// ErrTooManyProcesses is returned by Start when MaxRunning processes
	// are already running.
	ErrTooManyProcesses = errors.New("builtin: too many background processes running")
	// ErrUnknownProcess is returned (wrapped) by Get for an id the manager
	// does not know.
	ErrUnknownProcess = errors.New("builtin: unknown background process")
	// ErrManagerClosed is returned by Start after Close.
	ErrManagerClosed = errors.New("builtin: process manager closed")
)

// pipeGrace is how long a finished command's output pipe may stay open,
// held by a process that escaped its process group, before it is closed.
const pipeGrace = 2 * time.Second

// ProcessOptions configures a ProcessManager. The zero value is valid.
type ProcessOptions struct {
	// MaxRunning caps the background processes running at once. Zero means 16.
	MaxRunning int
	// MaxOutput is how many bytes of each process's most recent output are
	// kept for polling. Zero means 1 MiB.
	MaxOutput int
	// KeepFinished is how many finished processes stay listed; the oldest
	// are forgotten first. Zero means 32.
	KeepFinished int
	// Logger receives a line per started and finished process. The zero
	// Logger discards them.
	Logger zerolog.Logger
}

// Command is a shell command to start.
type Command struct {
	// Script is run as `bash -c Script`.
	Script string
	// Dir is the working directory, and under a Sandbox the one directory
	// the command may write to besides its private temporary directory.
	Dir string
	// Env is the complete environment ("KEY=value").
	Env []string
	// Description says in a few words what the command does.
	Description string
	// Sandbox confines the command (see sandbox.Sandbox.Start). Nil runs
	// it unconfined.
	Sandbox *sandbox.Sandbox
}

// ProcessManager owns the background processes bash starts and bash_process
// manages. Each process runs in a process group of its own, which Stop and
// Close kill whole. It is safe for concurrent use.
type ProcessManager struct {
	opts ProcessOptions

	mu       sync.Mutex
	procs    map[string]*Process
	order    []string       // ids in start order
	next     int            // the number of the last id given
	starting int            // processes being started, outside mu
	started  sync.WaitGroup // one per process being started; Close waits for them
	closed   bool
}

// NewProcessManager returns an empty manager.
func NewProcessManager(opts ProcessOptions) *ProcessManager {
	if opts.MaxRunning <= 0 {
		opts.MaxRunning = 16
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = 1 << 20
	}
	if opts.KeepFinished <= 0 {
		opts.KeepFinished = 32
	}
	return &ProcessManager{opts: opts, procs: make(map[string]*Process)}
}

// Start runs c in the background and returns its process, whose id is
// "bg_N". It fails with ErrTooManyProcesses or ErrManagerClosed, or when bash
// cannot be started (under c.Sandbox: confined; ctx bounds the wait for
// that).
func (m *ProcessManager) Start(ctx context.Context, c Command) (*Process, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrManagerClosed
	}
	running := m.starting
	for _, p := range m.procs {
		if p.running() {
			running++
		}
	}
	if running >= m.opts.MaxRunning {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w (limit %d)", ErrTooManyProcesses, m.opts.MaxRunning)
	}
	// Starting a confined command waits for its helper: hold a slot, not
	// the lock.
	m.starting++
	m.started.Add(1)
	defer m.started.Done()
	m.next++
	id := fmt.Sprintf("bg_%d", m.next)
	m.mu.Unlock()

	p, err := startProcess(ctx, id, c, m.opts.MaxOutput, m.opts.Logger)

	m.mu.Lock()
	m.starting--
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	if m.closed {
		m.mu.Unlock()
		p.Stop()
		<-p.Done()
		return nil, ErrManagerClosed
	}
	defer m.mu.Unlock()
	m.procs[id] = p
	m.order = append(m.order, id)
	m.forgetFinished(id)
	return p, nil
}

// forgetFinished drops the oldest finished processes beyond KeepFinished,
// never the one just started (keep): a short command may already have
// exited, and it must not push out an older process in its own Start.
// m.mu is held.
func (m *ProcessManager) forgetFinished(keep string) {
	done := func(id string) bool { return id != keep && !m.procs[id].running() }
	finished := 0
	for _, id := range m.order {
		if done(id) {
			finished++
		}
	}
	m.order = slices.DeleteFunc(m.order, func(id string) bool {
		if finished > m.opts.KeepFinished && done(id) {
			finished--
			delete(m.procs, id)
			return true
		}
		return false
	})
}

// Get returns the process with the given id, or an error wrapping
// ErrUnknownProcess.
func (m *ProcessManager) Get(id string) (*Process, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.procs[id]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownProcess, id)
}

// List describes the known processes in start order.
func (m *ProcessManager) List() []ProcessInfo {
	m.mu.Lock()
	procs := make([]*Process, 0, len(m.order))
	for _, id := range m.order {
		procs = append(procs, m.procs[id])
	}
	m.mu.Unlock()
	infos := make([]ProcessInfo, len(procs))
	for i, p := range procs {
		infos[i] = p.Info()
	}
	return infos
}

// Close kills every running process (with its whole process group), waits
// for them to exit and refuses new ones. It is safe to call more than once.
func (m *ProcessManager) Close() error {
	m.mu.Lock()
	m.closed = true
	procs := make([]*Process, 0, len(m.procs))
	for _, p := range m.procs {
		procs = append(procs, p)
	}
	m.mu.Unlock()
	for _, p := range procs {
		p.Stop()
	}
	for _, p := range procs {
		<-p.Done()
	}
	m.started.Wait() // a process started meanwhile stops itself
	return nil
}

// ProcessStatus is the state of a process.
type ProcessStatus string

// The process states.
const (
	StatusRunning ProcessStatus = "running"
	StatusExited  ProcessStatus = "exited"
	StatusStopped ProcessStatus = "stopped" // killed by Stop, a timeout or Close
)

// ProcessInfo describes a process at one moment.
type ProcessInfo struct {
	ID          string
	Command     string
	Description string
	PID         int
	Status      ProcessStatus
	// ExitCode is the exit status once the process has exited; -1 when a
	// signal ended it.
	ExitCode  int
	StartedAt time.Time
	// Duration is how long the process has run (so far).
	Duration time.Duration
}

// Process is one command started by a ProcessManager (or by bash in the
// foreground). Its methods are safe for concurrent use.
type Process struct {
	id, command, description string
	pid                      int
	started                  time.Time
	out                      *outputLog
	logger                   zerolog.Logger
	done                     chan struct{}

	// Set before done is closed.
	exitCode int
	ended    time.Time
	waitErr  error

	mu      sync.Mutex
	stopped bool
	readPos int64
}

// startProcess starts `bash -c c.Script` in a new process group, its stdout
// and stderr both going to one pipe read into an outputLog, and returns
// once bash runs (confined by c.Sandbox when it is set; ctx bounds the
// wait for that). When bash exits, whatever is left of its process group
// is killed.
func startProcess(ctx context.Context, id string, c Command, maxOutput int, logger zerolog.Logger) (*Process, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start command: %w", err)
	}
	cmd := exec.Command("bash", "-c", c.Script)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	release := func() {}
	if c.Sandbox != nil {
		release, err = c.Sandbox.Start(ctx, cmd, c.Dir)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, fmt.Errorf("start command: %w", err)
	}
	_ = w.Close() // the child holds its own copy
	p := &Process{
		id:          id,
		command:     c.Script,
		description: c.Description,
		pid:         cmd.Process.Pid,
		started:     time.Now(),
		out:         newOutputLog(maxOutput),
		logger:      logger,
		done:        make(chan struct{}),
	}
	p.logger.Debug().Str("process", id).Int("pid", p.pid).Msg("command started")
	read := make(chan struct{})
	go func() {
		defer close(read)
		p.out.readFrom(r)
	}()
	go func() {
		waitErr := cmd.Wait()
		killGroup(p.pid) // children left behind by the command
		grace := time.NewTimer(pipeGrace)
		select {
		case <-read:
		case <-grace.C:
			// A process that left the group still holds the pipe.
		}
		grace.Stop()
		_ = r.Close()
		<-read
		release()
		p.exitCode = cmd.ProcessState.ExitCode()
		p.ended = time.Now()
		var ee *exec.ExitError
		if waitErr != nil && !errors.As(waitErr, &ee) {
			p.waitErr = waitErr
		}
		p.logger.Debug().Str("process", id).Int("pid", p.pid).Int("exit_code", p.exitCode).Msg("command finished")
		close(p.done)
	}()
	return p, nil
}

// killGroup sends SIGKILL to the process group pgid. A group that no longer
// exists is not an error.
func killGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// ID returns the process id ("bg_1"); empty for a foreground command.
func (p *Process) ID() string { return p.id }

// PID returns the operating-system pid of bash, which is also the process
// group id.
func (p *Process) PID() int { return p.pid }

// Done is closed when the process has exited and its output is collected.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait blocks until the process has exited or ctx ends; it returns ctx's
// error in the latter case.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop kills the process and its whole process group. It returns at once;
// Wait or Done tell when it is gone. Stopping a finished process does
// nothing.
func (p *Process) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running() {
		return
	}
	p.stopped = true
	killGroup(p.pid)
}

// running reports whether the process has not finished yet.
func (p *Process) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Info describes the process now.
func (p *Process) Info() ProcessInfo {
	info := ProcessInfo{
		ID:          p.id,
		Command:     p.command,
		Description: p.description,
		PID:         p.pid,
		Status:      StatusRunning,
		StartedAt:   p.started,
		Duration:    time.Since(p.started),
	}
	if !p.running() {
		info.ExitCode = p.exitCode
		info.Duration = p.ended.Sub(p.started)
		info.Status = StatusExited
		p.mu.Lock()
		if p.stopped {
			info.Status = StatusStopped
		}
		p.mu.Unlock()
	}
	return info
}

// ReadNew returns the output written since the previous ReadNew (all of it
// the first time) and how many bytes of it were dropped because the output
// outgrew the kept limit. Text is cut on UTF-8 boundaries.
func (p *Process) ReadNew() (string, int64) {
	final := !p.running()
	p.mu.Lock()
	defer p.mu.Unlock()
	data, next, dropped := p.out.since(p.readPos, final)
	p.readPos = next
	return strings.ToValidUTF8(string(data), "\uFFFD"), dropped
}

// err returns a fault of the runtime that ended the wait for the process
// (not a non-zero exit), once it is done.
func (p *Process) err() error {
	if p.running() {
		return nil
	}
	return p.waitErr
}
