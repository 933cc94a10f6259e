package logging

import (
	"github.com/agcore/agcore/redact"

	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestNew_Level(t *testing.T) {
	tests := []struct {
		level string
		want  []string // messages written, in order
	}{
		{"", []string{"info", "warn", "error"}},
		{"debug", []string{"debug", "info", "warn", "error"}},
		{"INFO", []string{"info", "warn", "error"}},
		{"warn", []string{"warn", "error"}},
		{"warning", []string{"warn", "error"}},
		{" error ", []string{"error"}},
	}
	for _, tt := range tests {
		t.Run(tt.level, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := New(Options{Writer: &buf, Level: tt.level, Format: FormatJSON})
			if err != nil {
				t.Fatal(err)
			}
			log.Debug().Msg("debug")
			log.Info().Msg("info")
			log.Warn().Msg("warn")
			log.Error().Msg("error")
			var got []string
			for _, ev := range decodeLines(t, buf.Bytes()) {
				got = append(got, ev["message"].(string))
				if ev["level"] != ev["message"] {
					t.Errorf("level field %v for message %v", ev["level"], ev["message"])
				}
				if _, ok := ev["time"]; !ok {
					t.Errorf("no time field in %v", ev)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("written %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNew_InvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want error
	}{
		{"level", Options{Level: "verbose"}, ErrInvalidLevel},
		{"format", Options{Format: "xml"}, ErrInvalidFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("New(%+v) error = %v, want %v", tt.opts, err, tt.want)
			}
			bad := tt.opts.Level + tt.opts.Format
			if !strings.Contains(err.Error(), bad) {
				t.Errorf("error %q does not name the value %q", err, bad)
			}
		})
	}
}

func TestNew_Format(t *testing.T) {
	tests := []struct {
		format   string
		wantJSON bool
	}{
		{"", true}, // auto, and a buffer is not a terminal
		{FormatAuto, true},
		{FormatJSON, true},
		{"Console", false},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := New(Options{Writer: &buf, Format: tt.format})
			if err != nil {
				t.Fatal(err)
			}
			log.Info().Str("tool", "read_file").Str("api_key", "plain-value-1").Msg("tool done")
			out := buf.String()
			if got := json.Valid(buf.Bytes()); got != tt.wantJSON {
				t.Errorf("output is JSON = %v, want %v: %q", got, tt.wantJSON, out)
			}
			for _, want := range []string{"tool done", "read_file", redact.Mask} {
				if !strings.Contains(out, want) {
					t.Errorf("output %q lacks %q", out, want)
				}
			}
			if strings.Contains(out, "plain-value-1") {
				t.Errorf("output %q holds the secret", out)
			}
			if strings.Contains(out, "\x1b[") {
				t.Errorf("output %q is coloured though the writer is not a terminal", out)
			}
		})
	}
}

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, w := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "pipe": w} {
		if IsTerminal(w) {
			t.Errorf("IsTerminal(%s) = true", name)
		}
	}
}

func TestParseLevel(t *testing.T) {
	tests := map[string]zerolog.Level{
		"debug": zerolog.DebugLevel, "": zerolog.InfoLevel, "Warn": zerolog.WarnLevel, "error": zerolog.ErrorLevel,
	}
	for in, want := range tests {
		got, err := ParseLevel(in)
		if err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

// decodeLines parses JSON Lines output.
func decodeLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for line := range bytes.Lines(b) {
		var ev map[string]any
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}
