package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Mode says what happens to a command when the host cannot confine it.
type Mode int

// The modes. The zero Mode is Refuse: a sandbox fails closed.
const (
	// Refuse makes Check (and so bash) fail with an *UnavailableError
	// naming the reason and the setting to change.
	Refuse Mode = iota
	// Warn runs commands unconfined and logs a warning once.
	Warn
)

// String returns "refuse" or "warn".
func (m Mode) String() string {
	switch m {
	case Refuse:
		return "refuse"
	case Warn:
		return "warn"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "refuse" or "warn"; the empty string is Refuse.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "refuse":
		return Refuse, nil
	case "warn":
		return Warn, nil
	}
	return Refuse, fmt.Errorf("sandbox mode %q: want refuse or warn", s)
}

// DefaultStartTimeout is Config.StartTimeout when it is zero.
const DefaultStartTimeout = 10 * time.Second

// Config configures a Sandbox. The zero value is valid and the strictest:
// commands may read the system directories, read and write only their
// workspace and a private temporary directory, open no TCP connection, and
// are refused when the host cannot confine them.
type Config struct {
	// Mode says what happens when the host cannot confine commands (not
	// Linux, a kernel without Landlock ABI 4, Landlock forbidden by
	// seccomp, or a program that does not call Main). Zero means Refuse.
	Mode Mode
	// AllowPorts are the TCP ports commands may connect to, on any host
	// (Landlock matches ports, not addresses). Nil means none. Binding a
	// TCP port (listening) is always denied.
	AllowPorts []int
	// ExtraReadPaths are files or directories commands may also read and
	// execute, such as a toolchain installed outside the system
	// directories. Absolute paths. Nil means none.
	ExtraReadPaths []string
	// ExtraWritePaths are files or directories commands may also read and
	// write, such as a shared build cache (GOCACHE). Absolute paths. Nil
	// means none.
	ExtraWritePaths []string
	// Env are variables ("NAME=value") every confined command starts
	// with; the command's own environment overrides them. A shared Go
	// build cache, for one, is GOCACHE=/var/cache/agcore/go-build here
	// with that directory in ExtraWritePaths (by default GOCACHE is under
	// the private HOME, empty for every command). HOME and TMPDIR cannot
	// be set: they are the command's private directories. Nil means none.
	Env []string
	// Executable is the program re-executed to confine a command; it must
	// call Main first thing in main. Empty means the running program
	// (os.Executable).
	Executable string
	// StartTimeout bounds how long starting a confined command may take
	// before the helper answers. Zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// Logger receives the warning of Warn mode. The zero Logger discards
	// it.
	Logger zerolog.Logger
}

// Validate reports the first invalid field of c, by name.
func (c Config) Validate() error {
	if c.Mode != Refuse && c.Mode != Warn {
		return fmt.Errorf("sandbox: Mode: %v is not Refuse or Warn", c.Mode)
	}
	for i, p := range c.AllowPorts {
		if p < 1 || p > 65535 {
			return fmt.Errorf("sandbox: AllowPorts[%d]: %d is not a TCP port (1-65535)", i, p)
		}
	}
	for _, f := range []struct {
		name  string
		paths []string
	}{{"ExtraReadPaths", c.ExtraReadPaths}, {"ExtraWritePaths", c.ExtraWritePaths}} {
		for i, p := range f.paths {
			if err := checkPath(p); err != nil {
				return fmt.Errorf("sandbox: %s[%d]: %w", f.name, i, err)
			}
		}
	}
	for i, kv := range c.Env {
		name, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok || name == "" || strings.ContainsRune(kv, 0):
			return fmt.Errorf("sandbox: Env[%d]: %q is not NAME=value", i, kv)
		case name == "HOME" || name == "TMPDIR":
			return fmt.Errorf("sandbox: Env[%d]: %s is the command's private directory and cannot be set", i, name)
		}
	}
	if c.Executable != "" && !filepath.IsAbs(c.Executable) {
		return fmt.Errorf("sandbox: Executable: %q is not an absolute path", c.Executable)
	}
	if c.StartTimeout < 0 {
		return fmt.Errorf("sandbox: StartTimeout: %v is negative", c.StartTimeout)
	}
	return nil
}

// checkPath accepts an absolute path without NUL bytes.
func checkPath(p string) error {
	switch {
	case !filepath.IsAbs(p):
		return fmt.Errorf("%q is not an absolute path", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("%q contains a NUL byte", p)
	}
	return nil
}

// withDefaults returns a copy of c with zero fields filled in.
func (c Config) withDefaults() Config {
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	return c
}
