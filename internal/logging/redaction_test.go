package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/redact"
)

// testKey is shaped like a real OpenAI key; it must never reach the output.
const testKey = "sk-proj-Zq8TnW4vXy2LmK9pR3sD7fGh"

// TestLogger_NeverWritesAPIKey logs an API key in every way code is likely to,
// in both formats and through slog, and checks it never reaches the output.
func TestLogger_NeverWritesAPIKey(t *testing.T) {
	type providerOptions struct {
		BaseURL string
		APIKey  string
	}
	type taggedOptions struct {
		Model string `json:"model"`
		Key   string `json:"api_key"`
	}
	logs := []struct {
		name string
		log  func(zerolog.Logger)
	}{
		{"field", func(l zerolog.Logger) { l.Info().Str("api_key", testKey).Msg("configured") }},
		{"field not shaped like a key", func(l zerolog.Logger) { l.Info().Str("OPENAI_API_KEY", "abc").Msg("env") }},
		{"header", func(l zerolog.Logger) { l.Info().Str("Authorization", "Bearer "+testKey).Msg("request") }},
		{"message", func(l zerolog.Logger) { l.Info().Msg("retrying with key " + testKey) }},
		{"error", func(l zerolog.Logger) {
			l.Error().Err(fmt.Errorf("POST: 401: invalid key %s: %w", testKey, errors.New("unauthorized"))).Msg("chat failed")
		}},
		{"nested", func(l zerolog.Logger) {
			l.Info().Dict("openai", zerolog.Dict().Str("apiKey", testKey).Str("model", "m")).Msg("provider")
		}},
		{"struct", func(l zerolog.Logger) {
			l.Info().Interface("options", providerOptions{BaseURL: "http://127.0.0.1", APIKey: "abc"}).Msg("provider")
		}},
		{"tagged struct", func(l zerolog.Logger) {
			l.Info().Interface("options", taggedOptions{Model: "m", Key: "abc"}).Msg("provider")
		}},
		{"array", func(l zerolog.Logger) { l.Info().Strs("args", []string{"--api-key=" + testKey}).Msg("argv") }},
		{"context", func(l zerolog.Logger) {
			l = l.With().Str("token", "abc").Logger()
			l.Info().Msg("ctx")
		}},
		{"slog", func(l zerolog.Logger) {
			slog.New(SlogHandler(l)).Info("connect", "api_key", "abc", slog.Group("auth", "token", testKey))
		}},
	}
	for _, format := range []string{FormatJSON, FormatConsole} {
		for _, tt := range logs {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				var buf bytes.Buffer
				l, err := New(Options{Writer: &buf, Format: format})
				if err != nil {
					t.Fatal(err)
				}
				tt.log(l)
				out := buf.String()
				for _, secret := range []string{testKey, "Zq8TnW4vXy2LmK9pR3sD7fGh", `"abc"`, "=abc"} {
					if strings.Contains(out, secret) {
						t.Errorf("output holds the secret %q: %s", secret, out)
					}
				}
				if !strings.Contains(out, redact.Mask) {
					t.Errorf("output lacks %q: %s", redact.Mask, out)
				}
				if format == FormatJSON && !json.Valid(buf.Bytes()) {
					t.Errorf("output is not JSON: %s", out)
				}
			})
		}
	}
}
