package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/redact"
)

// TestRedacted logs secrets through a logger an embedding program built
// without any redaction, wrapped by Redacted, and checks that none reaches
// the program's output while level, message, fields and context survive.
func TestRedacted(t *testing.T) {
	var buf bytes.Buffer
	outer := zerolog.New(&buf).Level(zerolog.InfoLevel).With().Str("app", "svc").Logger()
	r := redact.New()
	r.Add("db-password-123", "<secret_ref:DB>")
	l := Redacted(outer, r)

	l.Warn().Str("dsn", "postgres://u:db-password-123@h/db").Str("api_key", "plain").Int("n", 3).Msg("connect with db-password-123")
	l.Debug().Str("x", "db-password-123").Msg("below the level")

	out := buf.String()
	if strings.Contains(out, "db-password-123") || strings.Contains(out, "plain") || strings.Contains(out, "below the level") {
		t.Fatalf("output: %s", out)
	}
	var ev map[string]any
	if err := json.Unmarshal(buf.Bytes(), &ev); err != nil {
		t.Fatalf("one JSON event expected: %v: %s", err, out)
	}
	want := map[string]any{"level": "warn", "app": "svc", "dsn": "postgres://u:<secret_ref:DB>@h/db",
		"api_key": redact.Mask, "n": float64(3), "message": "connect with <secret_ref:DB>"}
	for k, v := range want {
		if ev[k] != v {
			t.Errorf("%s = %v, want %v", k, ev[k], v)
		}
	}
	if got := Redacted(zerolog.Nop(), r); got.GetLevel() != zerolog.Disabled {
		t.Error("a disabled logger was wrapped")
	}
}

// TestRedacted_ZeroLogger wraps the zero Logger, which writes nowhere: the
// result costs nothing per event, instead of encoding, masking and
// decoding events that are then dropped.
func TestRedacted_ZeroLogger(t *testing.T) {
	l := Redacted(zerolog.Logger{}, redact.New())
	if n := testing.AllocsPerRun(100, func() { l.Debug().Str("k", "v").Msgf("writing %d entries", 3) }); n != 0 {
		t.Errorf("an event of the wrapped zero Logger allocates %.0f times, want none", n)
	}
}
