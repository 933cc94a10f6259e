// Package logging builds the zerolog.Logger that agcore passes down to every
// component: JSON by default, human-readable on a terminal, and with secrets
// scrubbed before a byte reaches the output.
//
//	log, err := logging.New(logging.Options{Writer: os.Stderr, Level: "debug"})
//	if err != nil {
//		return err
//	}
//	log.Info().Str("api_key", key).Msg("connecting") // api_key is written as "[redacted]"
//
// # Redaction
//
// Every event passes through the process's [redact.Redactor] before it is
// written (Options.Redactor; see [redact.Redactor.JSON]). A field whose name
// says it holds a credential (api_key, authorization, token, secret,
// password, ...) has its value replaced by "[redacted]", and any string value
// that holds a configured secret or something shaped like a credential (a
// bearer token, an "sk-..." key, a key in a URL query) is masked. This happens
// on the encoded event rather than in a zerolog hook, because a hook cannot
// see or change the fields already added to an event.
//
// # slog
//
// Libraries that log through log/slog (the actor runtime does) are routed into
// the same logger with [SlogHandler], so their records are levelled, formatted
// and redacted like every other line.
package logging

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/redact"
)

// ErrInvalidLevel is returned (wrapped) by New and ParseLevel for an unknown
// level name.
var ErrInvalidLevel = errors.New("invalid log level")

// ErrInvalidFormat is returned (wrapped) by New for an unknown format name.
var ErrInvalidFormat = errors.New("invalid log format")

// The formats Options.Format accepts.
const (
	// FormatAuto is console on a terminal and JSON otherwise.
	FormatAuto = "auto"
	// FormatJSON writes one JSON object per line.
	FormatJSON = "json"
	// FormatConsole writes human-readable lines, coloured on a terminal.
	FormatConsole = "console"
)

// Options configures New. The zero value logs JSON (or console lines on a
// terminal) at info level to standard error.
type Options struct {
	// Writer receives the log lines. Nil means os.Stderr. Writes are
	// serialised, so Writer need not be safe for concurrent use.
	Writer io.Writer
	// Level is the minimum level written: "debug", "info", "warn" or
	// "error" (case-insensitive). Empty means "info".
	Level string
	// Format is "json", "console" or "auto". Empty means "auto": console
	// when Writer is a terminal, JSON otherwise.
	Format string
	// Redactor masks credentials in every event. Nil masks credentials by
	// their shape and by their field name only; pass the process's Redactor
	// so that configured keys and secrets are masked too.
	Redactor *redact.Redactor
}

// New returns a logger configured by opts, with timestamps and redaction of
// secrets. It fails, naming the bad value, when the level or the format is
// unknown.
func New(opts Options) (zerolog.Logger, error) {
	level, err := ParseLevel(opts.Level)
	if err != nil {
		return zerolog.Nop(), err
	}
	w := opts.Writer
	if w == nil {
		w = os.Stderr
	}
	tty := IsTerminal(w)
	format := strings.ToLower(strings.TrimSpace(opts.Format))
	switch format {
	case "", FormatAuto:
		format = FormatJSON
		if tty {
			format = FormatConsole
		}
	case FormatJSON, FormatConsole:
	default:
		return zerolog.Nop(), fmt.Errorf("%w %q (want json, console or auto)", ErrInvalidFormat, opts.Format)
	}
	out := w
	if format == FormatConsole {
		out = zerolog.ConsoleWriter{Out: w, NoColor: !tty, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(opts.Redactor.JSONWriter(out)).Level(level).With().Timestamp().Logger(), nil
}

// ParseLevel maps a level name ("debug", "info", "warn" or "warning",
// "error"; case-insensitive; empty means info) to a zerolog level.
func ParseLevel(s string) (zerolog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return zerolog.DebugLevel, nil
	case "", "info":
		return zerolog.InfoLevel, nil
	case "warn", "warning":
		return zerolog.WarnLevel, nil
	case "error":
		return zerolog.ErrorLevel, nil
	}
	return zerolog.NoLevel, fmt.Errorf("%w %q (want debug, info, warn or error)", ErrInvalidLevel, s)
}

// IsTerminal reports whether w is a file attached to a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
