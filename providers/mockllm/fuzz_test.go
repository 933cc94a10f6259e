package mockllm_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/scripted"
)

// FuzzChatCompletions feeds arbitrary bodies to the chat endpoint: it must
// answer 200 with a completion or a stream, or an error status with an
// OpenAI error object, and never panic.
func FuzzChatCompletions(f *testing.F) {
	f.Add([]byte(`{"model":"scripted","messages":[{"role":"user","content":"hello"}]}`))
	f.Add([]byte(`{"model":"scripted","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`))
	h := mockllm.NewHandler(mockllm.Config{
		Provider:     scripted.MustNew(scripted.Script{Stateless: true, Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok", ToolCalls: []scripted.ToolCall{{Name: "f", Arguments: "{}"}}}}}}, scripted.Options{}),
		MaxBodyBytes: 1 << 16,
	})
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
		out := rec.Body.Bytes()
		switch {
		case rec.Code == http.StatusOK && rec.Header().Get("Content-Type") == "text/event-stream":
			if !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) {
				t.Fatalf("stream does not end with [DONE]: %q", out)
			}
		case rec.Code == http.StatusOK:
			var v struct {
				Choices []json.RawMessage `json:"choices"`
			}
			if err := json.Unmarshal(out, &v); err != nil || len(v.Choices) != 1 {
				t.Fatalf("completion %q: %v", out, err)
			}
		case rec.Code >= 400 && rec.Code < 500:
			var v struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(out, &v); err != nil || strings.TrimSpace(v.Error.Message) == "" {
				t.Fatalf("status %d with body %q: %v", rec.Code, out, err)
			}
		default:
			t.Fatalf("status %d for body %q: %s", rec.Code, body, out)
		}
	})
}
