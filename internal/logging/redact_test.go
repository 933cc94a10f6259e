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
)

// testKey is shaped like a real OpenAI key; it must never reach the output.
const testKey = "sk-proj-Zq8TnW4vXy2LmK9pR3sD7fGh"

func TestSecretKey(t *testing.T) {
	tests := map[string]bool{
		"api_key": true, "apiKey": true, "APIKey": true, "x-api-key": true, "openai.api_key": true,
		"Authorization": true, "token": true, "access_token": true, "refresh-token": true, "bearerToken": true,
		"client_secret": true, "secret": true, "password": true, "db_passwd": true, "credentials": true,
		"cookie": true, "Set-Cookie": true, "private_key": true, "aws_access_key_id": true,
		"prompt_tokens": false, "max_tokens": false, "tokenizer": false, "model": false, "key": false,
		"session": false, "tool": false, "base_url": false, "": false,
	}
	for name, want := range tests {
		if got := SecretKey(name); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"nothing to hide here", "nothing to hide here"},
		{"using " + testKey + " now", "using [redacted] now"},
		{"Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [redacted]"},
		{"authorization=basic dXNlcjpwYXNz", "authorization=basic [redacted]"},
		{`body {"api_key": "hunter22", "model": "gpt"}`, `body {"api_key": "[redacted]", "model": "gpt"}`},
		{"password=hunter22&user=bob", "password=[redacted]&user=bob"},
		{"client_secret: s3cr3t", "client_secret: [redacted]"},
		{"GET https://h/v1?key=AIzaSyA&alt=json", "GET https://h/v1?key=[redacted]&alt=json"},
		{"GET https://h/x?a=1&token=t0k3n#frag", "GET https://h/x?a=1&token=[redacted]#frag"},
		// Words that merely look like the patterns stay readable.
		{`unknown key: "model"`, `unknown key: "model"`},
		{"unexpected token: '}'", "unexpected token: '}'"},
		{"task-list and risk-assessment", "task-list and risk-assessment"},
		{"prompt_tokens=12 max_tokens=100", "prompt_tokens=12 max_tokens=100"},
		{"sk-short", "sk-short"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := Redact(got); again != got {
				t.Errorf("Redact is not idempotent: %q then %q", got, again)
			}
		})
	}
}

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
				if !strings.Contains(out, Redacted) {
					t.Errorf("output lacks %q: %s", Redacted, out)
				}
				if format == FormatJSON && !json.Valid(buf.Bytes()) {
					t.Errorf("output is not JSON: %s", out)
				}
			})
		}
	}
}

func TestRedactWriter(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"untouched", `{"level":"info","n":1.50,"message":"ok"}` + "\n", `{"level":"info","n":1.50,"message":"ok"}` + "\n"},
		{
			"order and types kept",
			`{"z":1,"api_key":{"a":[1,2]},"b":[true,null,"Bearer abcd1234"],"tokens":3}` + "\n",
			`{"z":1,"api_key":"[redacted]","b":[true,null,"Bearer [redacted]"],"tokens":3}` + "\n",
		},
		{"no newline", `{"secret":"x"}`, `{"secret":"[redacted]"}`},
		{"html not escaped", `{"m":"<a&b> token"}` + "\n", `{"m":"<a&b> token"}` + "\n"},
		{"not JSON", "plain api_key=abc line\n", "plain api_key=[redacted] line\n"},
		{"trailing garbage", `{"m":"x"}} password=abc`, `{"m":"x"}} password=[redacted]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			n, err := RedactWriter(&buf).Write([]byte(tt.in))
			if err != nil || n != len(tt.in) {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(tt.in))
			}
			if got := buf.String(); got != tt.want {
				t.Errorf("wrote %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRedactWriter_Error(t *testing.T) {
	want := errors.New("disk full")
	if _, err := RedactWriter(failWriter{want}).Write([]byte("{}\n")); !errors.Is(err, want) {
		t.Errorf("Write error = %v, want %v", err, want)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func BenchmarkRedactWriter(b *testing.B) {
	lines := map[string][]byte{
		"plain":  []byte(`{"level":"info","session":"s1","tool":"read_file","time":"2026-01-02T15:04:05Z","message":"tool finished"}` + "\n"),
		"secret": []byte(`{"level":"info","api_key":"` + testKey + `","time":"2026-01-02T15:04:05Z","message":"provider ready"}` + "\n"),
	}
	for name, line := range lines {
		b.Run(name, func(b *testing.B) {
			w := RedactWriter(discard{})
			for b.Loop() {
				_, _ = w.Write(line)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
