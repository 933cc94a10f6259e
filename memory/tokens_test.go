package memory_test

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

func TestHeuristic(t *testing.T) {
	h := memory.Heuristic{}
	for _, tc := range []struct {
		text string
		want int
	}{{"", 0}, {"a", 2}, {"abc", 4}, {"abcd", 6}, {"中", 4}, {strings.Repeat("x", 300), 400}} {
		if got := h.Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	img := messages.Message{Role: messages.RoleUser, Content: messages.Content{messages.TextPart("abc"), messages.ImagePart("https://x/y.png", "")}}
	call := messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{{ID: "1", Name: "abc", Arguments: "abc"}}}
	for _, tc := range []struct {
		name string
		msgs []messages.Message
		want int
	}{
		{"none", nil, 0},
		{"empty message", []messages.Message{{Role: messages.RoleUser}}, 4},
		{"text", []messages.Message{messages.UserText("abc")}, 8},
		{"image part", []messages.Message{img}, 4 + 4 + 50},
		{"tool call", []messages.Message{call}, 4 + 4 + 4},
		{"sum", []messages.Message{messages.UserText("abc"), messages.ToolResultMessage("1", "abc")}, 16},
	} {
		if got := h.CountMessages(tc.msgs); got != tc.want {
			t.Errorf("%s: CountMessages = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// failingTransport fails and counts every request.
type failingTransport struct{ calls atomic.Int32 }

func (f *failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	f.calls.Add(1)
	return nil, errors.New("network access in a test")
}

// TestTiktokenOffline loads every encoding with the network unusable and
// an empty tiktoken cache directory: the embedded loader must serve them.
func TestTiktokenOffline(t *testing.T) {
	ft := &failingTransport{}
	saved := http.DefaultTransport
	http.DefaultTransport = ft
	t.Cleanup(func() { http.DefaultTransport = saved })
	t.Setenv("TIKTOKEN_CACHE_DIR", t.TempDir())
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")

	tests := []struct {
		model, encoding string
		text            string
		tokens          int
	}{
		{"gpt-4o", "o200k_base", "hello world", 2},
		{"openai/gpt-4.1-mini", "o200k_base", "", 0},
		{"o3-mini", "o200k_base", "hello world", 2},
		{"gpt-4", "cl100k_base", "hello world", 2},
		{"gpt-3.5-turbo-0125", "cl100k_base", "tiktoken is great!", 6},
	}
	for _, tc := range tests {
		tk, err := memory.NewTiktoken(tc.model)
		if err != nil {
			t.Fatalf("NewTiktoken(%s): %v", tc.model, err)
		}
		if tk.Encoding() != tc.encoding {
			t.Errorf("NewTiktoken(%s).Encoding() = %s, want %s", tc.model, tk.Encoding(), tc.encoding)
		}
		if got := tk.Count(tc.text); got != tc.tokens {
			t.Errorf("%s: Count(%q) = %d, want %d", tc.model, tc.text, got, tc.tokens)
		}
	}
	if n := ft.calls.Load(); n != 0 {
		t.Errorf("loading encodings made %d network requests", n)
	}
}

func TestTiktokenCountMessages(t *testing.T) {
	tk, err := memory.NewTiktoken("gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	if got := tk.CountMessages(nil); got != 0 {
		t.Errorf("CountMessages(nil) = %d, want 0", got)
	}
	// 3 (reply priming) + per message 3 + role + content.
	msgs := []messages.Message{messages.UserText("hello world")}
	want := 3 + 3 + tk.Count("user") + 2
	if got := tk.CountMessages(msgs); got != want {
		t.Errorf("CountMessages = %d, want %d", got, want)
	}
	named := []messages.Message{{Role: messages.RoleUser, Name: "bob", Content: messages.Text("hello world")}}
	if got := tk.CountMessages(named); got != want+1+tk.Count("bob") {
		t.Errorf("CountMessages with a name = %d, want %d", got, want+1+tk.Count("bob"))
	}
	// The exact count of English text is well under the heuristic's.
	long := []messages.Message{messages.UserText(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 50))}
	if exact, est := tk.CountMessages(long), (memory.Heuristic{}).CountMessages(long); exact >= est {
		t.Errorf("exact %d >= heuristic %d", exact, est)
	}
}

func TestCounterFor(t *testing.T) {
	for _, tc := range []struct {
		model string
		exact bool
	}{
		{"gpt-4o", true}, {"gpt-4o-mini", true}, {"openai/gpt-4.1", true}, {"gpt-5", true}, {"o1", true},
		{"gpt-3.5-turbo", true}, {"llama3.1:8b", false}, {"deepseek-chat", false}, {"", false}, {"gpt-40", false},
	} {
		_, exact := memory.CounterFor(tc.model).(*memory.Tiktoken)
		if exact != tc.exact {
			t.Errorf("CounterFor(%q) exact = %v, want %v", tc.model, exact, tc.exact)
		}
	}
	if _, err := memory.NewTiktoken("llama3"); err == nil {
		t.Error("NewTiktoken(llama3) succeeded")
	}
}
