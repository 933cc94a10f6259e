package memory

import (
	"fmt"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/agcore/agcore/messages"
)

// TokenCounter counts tokens of text and of chat messages. Implementations
// are safe for concurrent use.
type TokenCounter interface {
	// Count returns the number of tokens of text.
	Count(text string) int
	// CountMessages returns the number of tokens msgs take in a request,
	// including the per-message overhead.
	CountMessages(msgs []messages.Message) int
}

// nonTextPartTokens is the flat cost of an image, audio or file part.
const nonTextPartTokens = 50

// Heuristic estimates tokens without a tokenizer, with the formula of the
// reference implementation, so that compaction thresholds mean the same
// thing: text costs ceil(bytes × 4 / 3) tokens (0 when empty), each non-text
// part 50, and each message 4 more for its role and framing; a tool call
// counts its name and arguments as text. The estimate is deliberately high
// (English runs about 4 bytes per token, CJK about 3 bytes per character),
// so compaction starts early rather than late. The zero value is ready to
// use.
type Heuristic struct{}

var _ TokenCounter = Heuristic{}

// Count implements TokenCounter.
func (Heuristic) Count(text string) int { return (len(text)*4 + 2) / 3 }

// CountMessages implements TokenCounter.
func (h Heuristic) CountMessages(msgs []messages.Message) int {
	n := 0
	for _, m := range msgs {
		n += h.countMessage(m)
	}
	return n
}

func (h Heuristic) countMessage(m messages.Message) int {
	n := 4
	for _, p := range m.Content {
		if p.Type == messages.PartText {
			n += h.Count(p.Text)
		} else {
			n += nonTextPartTokens
		}
	}
	if m.Refusal != "" {
		n += h.Count(m.Refusal)
	}
	for _, c := range m.ToolCalls {
		n += h.Count(c.Name) + h.Count(c.Arguments)
	}
	return n
}

// tiktokenLoaderOnce installs the embedded, offline BPE loader into
// tiktoken-go. tiktoken.SetBpeLoader sets a package-level variable of that
// library; doing it once, before this package's first use of tiktoken, keeps
// every encoding load inside the binary (the library's default loader
// downloads from the network).
var tiktokenLoaderOnce sync.Once

// encoders holds one tokenizer per encoding, built on first use. Its tables
// are large (hundreds of thousands of entries, a second or more to build)
// and read-only once built, so every counter of an encoding shares them.
// The map itself is never written.
var encoders = map[string]*sharedEncoder{
	tiktoken.MODEL_O200K_BASE:  {},
	tiktoken.MODEL_CL100K_BASE: {},
}

type sharedEncoder struct {
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
}

func encoder(name string) (*tiktoken.Tiktoken, error) {
	tiktokenLoaderOnce.Do(func() { tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader()) })
	e, ok := encoders[name]
	if !ok {
		return nil, fmt.Errorf("unknown encoding %s", name)
	}
	e.once.Do(func() { e.enc, e.err = tiktoken.GetEncoding(name) })
	return e.enc, e.err
}

// Tiktoken counts tokens exactly as OpenAI models do, with an encoding
// embedded in the binary; it never uses the network.
type Tiktoken struct {
	enc      *tiktoken.Tiktoken
	encoding string
}

var _ TokenCounter = (*Tiktoken)(nil)

// NewTiktoken returns the exact counter for an OpenAI model ("gpt-4o",
// "openai/gpt-4.1-mini", "o3", ...). It fails for a model whose encoding is
// not known. The first counter of an encoding builds its tables (about a
// second); later ones share them and cost nothing.
func NewTiktoken(model string) (*Tiktoken, error) {
	name, ok := encodingFor(model)
	if !ok {
		return nil, fmt.Errorf("memory: no tiktoken encoding for model %q", model)
	}
	enc, err := encoder(name)
	if err != nil {
		return nil, fmt.Errorf("memory: tiktoken encoding %s for %q: %w", name, model, err)
	}
	return &Tiktoken{enc: enc, encoding: name}, nil
}

// Encoding returns the name of the counter's encoding ("o200k_base", ...).
func (t *Tiktoken) Encoding() string { return t.encoding }

// Count implements TokenCounter. Special-token text counts as ordinary text.
func (t *Tiktoken) Count(text string) int {
	if text == "" {
		return 0
	}
	return len(t.enc.EncodeOrdinary(text))
}

// CountMessages implements TokenCounter with OpenAI's accounting for chat
// models: 3 tokens per message, 1 more for a name, 3 to prime the reply;
// tool calls count their name and arguments, non-text parts 50 each.
func (t *Tiktoken) CountMessages(msgs []messages.Message) int {
	if len(msgs) == 0 {
		return 0
	}
	n := 3
	for _, m := range msgs {
		n += 3 + t.Count(string(m.Role))
		for _, p := range m.Content {
			if p.Type == messages.PartText {
				n += t.Count(p.Text)
			} else {
				n += nonTextPartTokens
			}
		}
		if m.Name != "" {
			n += 1 + t.Count(m.Name)
		}
		n += t.Count(m.Refusal)
		for _, c := range m.ToolCalls {
			n += 3 + t.Count(c.Name) + t.Count(c.Arguments)
		}
	}
	return n
}

// encodingFor maps an OpenAI model name, with or without an "openai/"
// prefix, onto its tiktoken encoding.
func encodingFor(model string) (string, bool) {
	model = strings.ToLower(strings.TrimPrefix(model, "openai/"))
	for _, m := range []struct{ prefix, encoding string }{
		{"gpt-5", tiktoken.MODEL_O200K_BASE},
		{"gpt-4.5", tiktoken.MODEL_O200K_BASE},
		{"gpt-4.1", tiktoken.MODEL_O200K_BASE},
		{"gpt-4o", tiktoken.MODEL_O200K_BASE},
		{"chatgpt-4o", tiktoken.MODEL_O200K_BASE},
		{"gpt-oss", tiktoken.MODEL_O200K_BASE},
		{"o1", tiktoken.MODEL_O200K_BASE},
		{"o3", tiktoken.MODEL_O200K_BASE},
		{"o4", tiktoken.MODEL_O200K_BASE},
		{"gpt-4", tiktoken.MODEL_CL100K_BASE},
		{"gpt-3.5", tiktoken.MODEL_CL100K_BASE},
		{"text-embedding-", tiktoken.MODEL_CL100K_BASE},
	} {
		if model == m.prefix || strings.HasPrefix(model, m.prefix+"-") || strings.HasPrefix(model, m.prefix+".") ||
			(strings.HasSuffix(m.prefix, "-") && strings.HasPrefix(model, m.prefix)) {
			return m.encoding, true
		}
	}
	return "", false
}

// CounterFor returns the exact counter for a known OpenAI model and the
// Heuristic for any other model, or when the encoding cannot be loaded.
func CounterFor(model string) TokenCounter {
	if t, err := NewTiktoken(model); err == nil {
		return t
	}
	return Heuristic{}
}
