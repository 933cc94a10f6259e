package logging

import (
	"github.com/agcore/agcore/redact"

	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSlogHandler(t *testing.T) {
	tests := []struct {
		name string
		log  func(*slog.Logger)
		want []map[string]any // decoded events without their time field
	}{
		{
			name: "levels below the logger's are dropped",
			log: func(l *slog.Logger) {
				l.Debug("hidden")
				l.Info("shown")
				l.Warn("careful")
				l.Error("failed", "err", errors.New("boom"))
			},
			want: []map[string]any{
				{"level": "info", "message": "shown"},
				{"level": "warn", "message": "careful"},
				{"level": "error", "message": "failed", "err": "boom"},
			},
		},
		{
			name: "attributes and groups",
			log: func(l *slog.Logger) {
				l.With("actor", "session/1").WithGroup("mailbox").Info("queued",
					"len", 3, "ok", true, "wait", 1500*time.Millisecond, slog.Group("msg", "type", "SubmitTurn"))
			},
			want: []map[string]any{{
				"level": "info", "message": "queued", "actor": "session/1", "mailbox.len": float64(3),
				"mailbox.ok": true, "mailbox.wait": float64(1500), "mailbox.msg.type": "SubmitTurn",
			}},
		},
		{
			name: "empty keys and groups",
			log: func(l *slog.Logger) {
				l.WithGroup("").Info("m", "", 1, slog.Group("empty"), slog.Group("", "inlined", "x"))
			},
			want: []map[string]any{{"level": "info", "message": "m", "inlined": "x"}},
		},
		{
			name: "secrets redacted",
			log:  func(l *slog.Logger) { l.Info("dial", "authorization", "Bearer abcdefgh", "url", "http://h/?token=abc") },
			want: []map[string]any{{
				"level": "info", "message": "dial", "authorization": redact.Mask, "url": "http://h/?token=" + redact.Mask,
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			zl, err := New(Options{Writer: &buf, Format: FormatJSON})
			if err != nil {
				t.Fatal(err)
			}
			tt.log(slog.New(SlogHandler(zl)))
			got := decodeLines(t, buf.Bytes())
			for _, ev := range got {
				if _, ok := ev["time"]; !ok {
					t.Errorf("event %v has no time", ev)
				}
				delete(ev, "time")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSlogHandler_Enabled(t *testing.T) {
	zl, err := New(Options{Writer: &bytes.Buffer{}, Level: "warn"})
	if err != nil {
		t.Fatal(err)
	}
	h := SlogHandler(zl)
	for level, want := range map[slog.Level]bool{
		slog.LevelDebug: false, slog.LevelInfo: false, slog.LevelWarn: true, slog.LevelError: true,
	} {
		if got := h.Enabled(context.Background(), level); got != want {
			t.Errorf("Enabled(%v) = %v, want %v", level, got, want)
		}
	}
}
