package config

import (
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys/sandbox"
)

// Sandbox configures the confinement of the commands bash runs (Landlock,
// on Linux): they read the system directories, write only the workspace
// and a private HOME and TMPDIR, and open no TCP connection unless
// allowed.
type Sandbox struct {
	// Mode says what happens where commands cannot be confined: "refuse"
	// (the default: bash returns an error naming the reason) or "warn"
	// (commands run unconfined, with a warning in the log).
	Mode string `yaml:"mode"`
	// AllowPorts are the TCP ports commands may connect to, such as 443.
	// Empty means none.
	AllowPorts []int `yaml:"allow_ports"`
	// ExtraReadPaths are absolute paths commands may also read and
	// execute (a toolchain outside the system directories). Empty means
	// none.
	ExtraReadPaths []string `yaml:"extra_read_paths"`
	// ExtraWritePaths are absolute paths commands may also write (a
	// shared build cache). Empty means none.
	ExtraWritePaths []string `yaml:"extra_write_paths"`
	// Env are variables ("NAME=value") every command starts with, such as
	// GOCACHE=/var/cache/agcore/go-build for a build cache listed in
	// extra_write_paths. HOME and TMPDIR are the command's own. Empty
	// means none.
	Env []string `yaml:"env"`
}

// sandboxConfig maps s onto the sandbox's configuration; s is valid.
func (s Sandbox) sandboxConfig(log zerolog.Logger) sandbox.Config {
	mode, _ := sandbox.ParseMode(s.Mode) // validated
	return sandbox.Config{Mode: mode, AllowPorts: s.AllowPorts, ExtraReadPaths: s.ExtraReadPaths,
		ExtraWritePaths: s.ExtraWritePaths, Env: s.Env, Logger: log}
}

// validateSandbox checks the sandbox section, naming each key.
func (c *Config) validateSandbox(ps *problems) {
	s := c.Sandbox
	if _, err := sandbox.ParseMode(s.Mode); err != nil {
		ps.add("sandbox.mode", "unknown mode %q (known: refuse, warn)", s.Mode)
	}
	for i, p := range s.AllowPorts {
		if p < 1 || p > 65535 {
			ps.add(fmt.Sprintf("sandbox.allow_ports[%d]", i), "%d is not a TCP port (1-65535)", p)
		}
	}
	for i, kv := range s.Env {
		name, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok || !envNameRE.MatchString(name):
			ps.add(fmt.Sprintf("sandbox.env[%d]", i), "want NAME=value, got %q", kv)
		case name == "HOME" || name == "TMPDIR":
			ps.add(fmt.Sprintf("sandbox.env[%d]", i), "%s is the command's private directory and cannot be set", name)
		}
	}
	for key, paths := range map[string][]string{"extra_read_paths": s.ExtraReadPaths, "extra_write_paths": s.ExtraWritePaths} {
		for i, p := range paths {
			if p == "" || p[0] != '/' {
				ps.add(fmt.Sprintf("sandbox.%s[%d]", key, i), "%q is not an absolute path", p)
			}
		}
	}
}
