package toolsys

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/redact"
)

// loggingTool logs and returns what its run function gives, through the
// call's own logger.
type loggingTool struct {
	rawTool
	log func(l zerolog.Logger)
}

func (t *loggingTool) Execute(ctx context.Context, args json.RawMessage, tc *Context) (Result, error) {
	t.log(tc.Logger)
	return t.rawTool.Execute(ctx, args, tc)
}

// TestRegistry_RedactsEverythingACallLetsOut makes tools leak a configured
// API key, a substituted secret and credentials of known shapes through
// their result, metadata, error, panic and own logger, and checks that none
// survives while file-like name=value content stays intact.
func TestRegistry_RedactsEverythingACallLetsOut(t *testing.T) {
	const apiKey = "provider-key-0123456789"
	const ghToken = "ghp_0123456789abcdefghijABCDEFGHIJklmnop"
	r := redact.New()
	r.Add(apiKey, "")
	var logs bytes.Buffer
	reg := NewRegistry(Config{Secrets: MapSecrets{"DB": "db-pass-4242"}, Redactor: r})
	reg.MustRegister(&loggingTool{
		rawTool: rawTool{name: "leaky", secrets: []string{"cmd"}, run: func(_ context.Context, args json.RawMessage) (Result, error) {
			return Result{
				Content:  fmt.Sprintf("args %s\nkey %s\nAuthorization: Bearer abc.def-123\ntoken %s\npassword = os.Getenv(\"P\")", args, apiKey, ghToken),
				Metadata: map[string]any{"nested": []any{map[string]any{"k": apiKey}}},
			}, nil
		}},
		log: func(l zerolog.Logger) {
			l.Warn().Str("api_key", "x").Str("header", "Bearer abc.def-123").Msg("using " + apiKey + " and db-pass-4242")
		},
	})
	reg.MustRegister(&rawTool{name: "fails", run: func(context.Context, json.RawMessage) (Result, error) {
		return Result{}, fmt.Errorf("POST /v1: 401 Authorization: Bearer %s", apiKey)
	}})
	reg.MustRegister(&rawTool{name: "panics", run: func(context.Context, json.RawMessage) (Result, error) {
		panic("config holds " + apiKey)
	}})

	tc := &Context{Logger: zerolog.New(&logs).Level(zerolog.DebugLevel)}
	res, err := reg.Call(t.Context(), "leaky", json.RawMessage(`{"cmd":"login <secret_ref:DB>"}`), tc)
	if err != nil {
		t.Fatal(err)
	}
	_, failErr := reg.Call(t.Context(), "fails", nil, tc)
	panicked, _ := reg.Call(t.Context(), "panics", nil, tc)

	out := strings.Join([]string{res.Content, fmt.Sprint(res.Metadata), fmt.Sprint(failErr), panicked.Content, logs.String()}, "\n")
	for _, secret := range []string{apiKey, "db-pass-4242", ghToken, "abc.def-123"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q leaked:\n%s", secret, out)
		}
	}
	for _, kept := range []string{`password = os.Getenv("P")`, "<secret_ref:DB>", "login"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q was lost:\n%s", kept, out)
		}
	}
	if !strings.Contains(logs.String(), `"level":"warn"`) {
		t.Errorf("the tool's log line was lost: %s", logs.String())
	}
}
