package wasm

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
)

// Defaults of Config.
const (
	// DefaultMemoryLimitPages caps a tool's linear memory at 2048 pages of
	// 64 KiB: 128 MiB.
	DefaultMemoryLimitPages = 2048
	// MaxMemoryLimitPages is the most WebAssembly can address: 4 GiB.
	MaxMemoryLimitPages = 65536
	// DefaultTimeout bounds one run of a tool.
	DefaultTimeout = 30 * time.Second
	// DefaultOutputLimit caps the standard output kept from one run: 1 MiB.
	DefaultOutputLimit = 1 << 20
	// DefaultStderrLimit caps the standard error kept for the log: 16 KiB.
	DefaultStderrLimit = 16 << 10
	// DefaultMaxFileSize is the largest .wasm file loaded: 64 MiB.
	DefaultMaxFileSize = 64 << 20
)

// Config configures a Runtime. The zero value is valid: no disk cache,
// 128 MiB of memory, 30 s per run, 1 MiB of output, hard-linked files
// refused.
type Config struct {
	// CacheDir keeps the compiled code of tools across restarts, so that a
	// restarted process does not compile a tool again. It holds native
	// code the process runs: it is created with mode 0700, and a directory
	// that others may write (mode & 022) is refused. Empty means compiled
	// code is kept in memory only.
	CacheDir string
	// MemoryLimitPages caps each tool's linear memory, in pages of 64 KiB;
	// a tool that asks for more is refused more (a Go program then stops
	// with "out of memory"). Zero means DefaultMemoryLimitPages; at most
	// MaxMemoryLimitPages.
	MemoryLimitPages uint32
	// Timeout bounds one run of a tool (a call, or --help when loading);
	// the module is closed when it passes. A call's own context deadline
	// applies too, whichever comes first. Zero means DefaultTimeout.
	Timeout time.Duration
	// OutputLimit caps the standard output kept from one run, in bytes.
	// Past it the tool's writes fail and its result is cut and says so.
	// Zero means DefaultOutputLimit. (The registry's own cap on what the
	// model reads, toolsys.Config.OutputLimit, still applies.)
	OutputLimit int
	// StderrLimit caps the standard error kept for the log, in bytes; the
	// rest is counted and dropped. Zero means DefaultStderrLimit.
	StderrLimit int
	// MaxFileSize is the largest .wasm file loaded, in bytes. Zero means
	// DefaultMaxFileSize.
	MaxFileSize int64
	// Files is the policy for the files a tool opens in the workspace. The
	// zero value refuses a regular file with more than one hard link, as
	// the built-in file tools do. Named pipes, sockets and devices are
	// always refused.
	Files toolsys.FilePolicy
	// Logger receives a line per load and the standard error of each run.
	// The zero Logger discards.
	Logger zerolog.Logger
}

// withDefaults returns c with its zero fields filled in, or an error
// naming the field that is out of range.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("wasm: Config.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	switch {
	case c.MemoryLimitPages == 0:
		c.MemoryLimitPages = DefaultMemoryLimitPages
	case c.MemoryLimitPages > MaxMemoryLimitPages:
		bad("MemoryLimitPages", "%d is more than WebAssembly can address (at most %d)", c.MemoryLimitPages, MaxMemoryLimitPages)
	}
	switch {
	case c.Timeout == 0:
		c.Timeout = DefaultTimeout
	case c.Timeout < 0:
		bad("Timeout", "must not be negative, got %s", c.Timeout)
	}
	switch {
	case c.OutputLimit == 0:
		c.OutputLimit = DefaultOutputLimit
	case c.OutputLimit < 0:
		bad("OutputLimit", "must not be negative, got %d", c.OutputLimit)
	}
	switch {
	case c.StderrLimit == 0:
		c.StderrLimit = DefaultStderrLimit
	case c.StderrLimit < 0:
		bad("StderrLimit", "must not be negative, got %d", c.StderrLimit)
	}
	switch {
	case c.MaxFileSize == 0:
		c.MaxFileSize = DefaultMaxFileSize
	case c.MaxFileSize < 0:
		bad("MaxFileSize", "must not be negative, got %d", c.MaxFileSize)
	}
	if c.CacheDir != "" {
		if err := checkCacheDir(c.CacheDir); err != nil {
			bad("CacheDir", "%v", err)
		}
	}
	return c, errors.Join(errs...)
}

// checkCacheDir refuses an existing cache directory that others may write:
// whoever writes it chooses the native code the process runs.
func checkCacheDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s is writable by others (mode %04o): it holds native code the process runs; make it 0700", dir, fi.Mode().Perm())
	}
	return nil
}
