package providers_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/providertest"
	"github.com/agcore/agcore/providers/scripted"
)

// countingProvider counts the Chat and Stream calls that reach inner.
type countingProvider struct {
	inner         providers.Provider
	chats, stream atomic.Int64
}

func (p *countingProvider) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	p.chats.Add(1)
	return p.inner.Chat(ctx, req)
}

func (p *countingProvider) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	p.stream.Add(1)
	return p.inner.Stream(ctx, req)
}

// TestChatOnly_Conformance holds ChatOnly to the provider conformance
// suite, and checks that no call streams from the endpoint.
func TestChatOnly_Conformance(t *testing.T) {
	var inners []*countingProvider
	providertest.Run(t, func(t *testing.T, s scripted.Script) providers.Provider {
		inner := &countingProvider{inner: scripted.MustNew(s, scripted.Options{})}
		inners = append(inners, inner)
		return providers.ChatOnly(inner)
	})
	var chats int64
	for _, p := range inners {
		if n := p.stream.Load(); n != 0 {
			t.Errorf("the endpoint was asked to stream %d times", n)
		}
		chats += p.chats.Load()
	}
	if chats == 0 {
		t.Error("no Chat call reached the endpoint")
	}
}

// TestChatOnly_OneChunk checks that Stream delivers the reply as one chunk
// with its text, tool calls, finish reason and usage.
func TestChatOnly_OneChunk(t *testing.T) {
	p := providers.ChatOnly(scripted.MustNew(scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true},
		Reply: scripted.Reply{Text: "Let me look.", ToolCalls: []scripted.ToolCall{{Name: "read_file", Arguments: `{"path":"a"}`}}}}}}, scripted.Options{ChunkSize: 2}))
	s, err := p.Stream(t.Context(), messages.Request{Messages: []messages.Message{messages.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var chunks []providers.Chunk
	for c, err := range providers.Chunks(s) {
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
	}
	if len(chunks) != 1 || chunks[0].Text != "Let me look." || len(chunks[0].ToolCalls) != 1 ||
		chunks[0].FinishReason != messages.FinishToolCalls || chunks[0].Usage == nil {
		t.Fatalf("chunks = %+v, want one chunk with the whole reply", chunks)
	}
	if got := s.Response(); got.Message.Text() != "Let me look." || len(got.Message.ToolCalls) != 1 || got.Message.ToolCalls[0].Name != "read_file" {
		t.Errorf("Response() = %+v", got)
	}
}

// TestChatOnly_KeepsTheRetryLayer checks that SingleAttempt sees through
// ChatOnly to the provider's own retry layer, and keeps ChatOnly.
func TestChatOnly_KeepsTheRetryLayer(t *testing.T) {
	inner := &countingProvider{inner: scripted.MustNew(scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true},
		Reply: scripted.Reply{Text: "ok"}}}}, scripted.Options{})}
	p := providers.ChatOnly(providers.WithRetry(inner, providers.RetryPolicy{}))
	single := providers.SingleAttempt(p)
	if _, ok := single.(providers.Retrier); ok {
		t.Fatal("SingleAttempt(ChatOnly(WithRetry(p))) is still a Retrier")
	}
	s, err := single.Stream(t.Context(), messages.Request{Messages: []messages.Message{messages.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, err := range providers.Chunks(s) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if inner.stream.Load() != 0 || inner.chats.Load() != 1 {
		t.Errorf("endpoint calls: %d streams, %d chats; want 0 and 1", inner.stream.Load(), inner.chats.Load())
	}
}
