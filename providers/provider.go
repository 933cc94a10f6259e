package providers

import (
	"context"
	"errors"
	"io"
	"iter"
	"sort"
	"strings"

	"github.com/agcore/agcore/messages"
)

// Provider is a chat model behind some API. Implementations must be safe for
// concurrent use by many goroutines.
type Provider interface {
	// Chat sends req and waits for the complete reply.
	Chat(ctx context.Context, req messages.Request) (*messages.Response, error)
	// Stream sends req and returns the reply as it is generated. The caller
	// must Close the stream. Cancelling ctx ends the stream with ctx's error.
	Stream(ctx context.Context, req messages.Request) (Stream, error)
}

// Chunk is one piece of a streamed reply.
type Chunk struct {
	// Text is a piece of assistant text.
	Text string
	// ToolCalls are fragments of tool calls; see ToolCallDelta.
	ToolCalls []ToolCallDelta
	// FinishReason is set on the chunk that ends the reply.
	FinishReason messages.FinishReason
	// Usage is set on the chunk that reports usage (usually the last).
	Usage *messages.Usage
	// ID and Model identify the response, when the provider says.
	ID, Model string
}

// ToolCallDelta is a fragment of the Index-th tool call of a reply. ID and
// Name arrive on the first fragment of a call; Arguments is a piece of the
// argument JSON, to be concatenated in order.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Stream is a reply being generated. It is used by one goroutine.
type Stream interface {
	// Recv returns the next chunk. It returns io.EOF after the last chunk,
	// and any other error when the stream failed.
	Recv() (Chunk, error)
	// Response returns the reply assembled from the chunks received so far;
	// after Recv returned io.EOF it is the complete reply with its usage.
	Response() *messages.Response
	// Close releases the stream. It is safe to call more than once.
	Close() error
}

// Chunks ranges over the chunks of s. The sequence ends after the last chunk,
// or after yielding one non-nil error. It does not close s.
func Chunks(s Stream) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for {
			c, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(Chunk{}, err)
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// Accumulator assembles streamed chunks into a complete response: text
// concatenated, tool-call fragments joined per index into whole calls (in
// index order), the last finish reason and the last usage kept.
// The zero value is ready to use.
type Accumulator struct {
	id, model string
	text      strings.Builder
	calls     map[int]*callBuilder
	finish    messages.FinishReason
	usage     messages.Usage
}

type callBuilder struct {
	id, name string
	args     strings.Builder
}

// Add folds c into the response.
func (a *Accumulator) Add(c Chunk) {
	if c.ID != "" {
		a.id = c.ID
	}
	if c.Model != "" {
		a.model = c.Model
	}
	a.text.WriteString(c.Text)
	for _, d := range c.ToolCalls {
		if a.calls == nil {
			a.calls = make(map[int]*callBuilder)
		}
		b := a.calls[d.Index]
		if b == nil {
			b = &callBuilder{}
			a.calls[d.Index] = b
		}
		if d.ID != "" {
			b.id = d.ID
		}
		if d.Name != "" {
			b.name = d.Name
		}
		b.args.WriteString(d.Arguments)
	}
	if c.FinishReason != "" {
		a.finish = c.FinishReason
	}
	if c.Usage != nil {
		a.usage = *c.Usage
	}
}

// Response returns the response assembled so far.
func (a *Accumulator) Response() *messages.Response {
	msg := messages.Message{Role: messages.RoleAssistant, Content: messages.Text(a.text.String())}
	if len(a.calls) > 0 {
		idx := make([]int, 0, len(a.calls))
		for i := range a.calls {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		msg.ToolCalls = make([]messages.ToolCall, 0, len(idx))
		for _, i := range idx {
			b := a.calls[i]
			msg.ToolCalls = append(msg.ToolCalls, messages.ToolCall{ID: b.id, Name: b.name, Arguments: b.args.String()})
		}
	}
	return &messages.Response{ID: a.id, Model: a.model, Message: msg, FinishReason: a.finish, Usage: a.usage}
}
