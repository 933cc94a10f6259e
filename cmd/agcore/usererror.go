package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/providers/mockllm"
)

// userMessage is err's message as the command line prints it: without the
// prefixes that name agcore's Go packages ("memory: invalid session id"
// reads "invalid session id"), which mean nothing to a user.
func userMessage(err error) string {
	return withoutPackages(err.Error())
}

// withoutPackages takes out of s every "pkg: " that starts s or one of its
// ": "-separated parts, where pkg is one of agcore's package names.
func withoutPackages(s string) string {
	var b strings.Builder
	for {
		for {
			word, rest, ok := strings.Cut(s, ": ")
			if !ok || !isPackageName(word) {
				break
			}
			s = rest
		}
		i := strings.Index(s, ": ")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+2])
		s = s[i+2:]
	}
}

// isPackageName reports whether word names one of agcore's packages whose
// errors carry their name. A provider's errors start with the name the
// configuration gives it ("openai", "local"), which is kept.
func isPackageName(word string) bool {
	switch word {
	case "actors", "builtin", "config", "httpapi", "knowledge", "logging", "mcp", "memory", "messages",
		"mockllm", "providers", "redact", "sandbox", "scripted", "supervisor", "toolsys", "wasm":
		return true
	}
	return false
}

// exitCode is the exit code of a command that failed with err: exitUsage
// for a wrong command line or configuration, exitError otherwise.
func exitCode(err error) int {
	if _, ok := errors.AsType[*usageError](err); ok {
		return exitUsage
	}
	if errors.Is(err, config.ErrInvalid) || errors.Is(err, memory.ErrInvalidSession) || errors.Is(err, mockllm.ErrNonLoopback) {
		return exitUsage
	}
	return exitError
}

// checkListenAddr checks the address of flag before anything listens on
// it: host:port, with a port from 0 to 65535 (or a service name).
func checkListenAddr(flag, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return &usageError{fmt.Errorf("%s %q: %w", flag, addr, err)}
	}
	if n, err := strconv.Atoi(port); err == nil {
		if n < 0 || n > 65535 {
			return &usageError{fmt.Errorf("%s %s: port %d is out of range (0 to 65535; 0 picks a free port)", flag, addr, n)}
		}
		return nil
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return &usageError{fmt.Errorf("%s %s: unknown port %q", flag, addr, port)}
	}
	return nil
}

// listenError describes a failure to listen on the address of flag. An
// address this host cannot listen on (not one of its own, a privileged
// port, a name that does not resolve) is a usage error; a port in use is
// not, but the message says what to do.
func listenError(flag, addr string, err error) error {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%s %s: the address is in use; pick another port (port 0 picks a free one)", flag, addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, syscall.EACCES), errors.As(err, &dns):
		return &usageError{fmt.Errorf("%s %s: %w", flag, addr, err)}
	}
	return fmt.Errorf("%s %s: %w", flag, addr, err)
}
