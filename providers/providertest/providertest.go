// Package providertest is a conformance suite for providers.Provider
// implementations. Run drives a provider through scripted conversations
// (text, tool calls, parallel tool calls, usage, streaming, cancellation,
// failures) and checks what comes back, so that a provider talking to a
// real wire protocol can be held to the behaviour of the scripted model:
//
//	func TestConformance(t *testing.T) {
//		providertest.Run(t, func(t *testing.T, s scripted.Script) providers.Provider {
//			srv := startMockServer(t, scripted.MustNew(s, scripted.Options{}))
//			return newClientProvider(t, srv.URL())
//		})
//	}
package providertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
)

// NewProvider returns the provider under test, answering as script says.
// The provider must report failures as they are, without retrying them.
// Resources it holds are released with t.Cleanup.
type NewProvider func(t *testing.T, script scripted.Script) providers.Provider

// Run runs the conformance suite against the providers newProvider makes.
// Each case is a subtest with its own provider. The scripts are stateless,
// so a provider may send a request more than once.
func Run(t *testing.T, newProvider NewProvider) {
	t.Helper()
	cases := []struct {
		name string
		run  func(*testing.T, NewProvider)
	}{
		{"ChatText", testChatText},
		{"ChatToolCall", testChatToolCall},
		{"ChatParallelToolCalls", testChatParallelToolCalls},
		{"ToolResultRoundTrip", testToolResultRoundTrip},
		{"EstimatedUsage", testEstimatedUsage},
		{"StreamMatchesChat", testStreamMatchesChat},
		{"StreamCancel", testStreamCancel},
		{"CancelledContext", testCancelledContext},
		{"Failures", testFailures},
		{"NoMatch", testNoMatch},
		{"Concurrent", testConcurrent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newProvider) })
	}
}

func stateless(rules ...scripted.Rule) scripted.Script {
	return scripted.Script{Stateless: true, Rules: rules}
}

func user(text string) messages.Request {
	return messages.Request{Messages: []messages.Message{messages.UserText(text)}}
}

// fixedUsage is the usage the scripts report, to check it arrives intact.
func fixedUsage() *messages.Usage {
	return &messages.Usage{PromptTokens: 11, CompletionTokens: 7, TotalTokens: 18}
}

func chat(t *testing.T, p providers.Provider, req messages.Request) *messages.Response {
	t.Helper()
	resp, err := p.Chat(t.Context(), req)
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	return resp
}

// stream reads a whole stream and returns its assembled response and the
// concatenated text of its chunks.
func stream(t *testing.T, p providers.Provider, req messages.Request) (*messages.Response, string) {
	t.Helper()
	st, err := p.Stream(t.Context(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer st.Close()
	var text strings.Builder
	for c, err := range providers.Chunks(st) {
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		text.WriteString(c.Text)
	}
	return st.Response(), text.String()
}

func testChatText(t *testing.T, np NewProvider) {
	p := np(t, stateless(scripted.Rule{Match: scripted.Match{Contains: "hello"}, Reply: scripted.Reply{Text: "Hello! How can I help?", Usage: fixedUsage()}}))
	resp := chat(t, p, user("hello there"))
	want := messages.Response{Message: messages.AssistantText("Hello! How can I help?"), FinishReason: messages.FinishStop, Usage: *fixedUsage()}
	if diff := cmp.Diff(want, *resp, cmpopts.IgnoreFields(messages.Response{}, "ID", "Model")); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

func testChatToolCall(t *testing.T, np NewProvider) {
	p := np(t, stateless(scripted.Rule{Match: scripted.Match{Contains: "weather"}, Reply: scripted.Reply{
		ToolCalls: []scripted.ToolCall{{ID: "call_weather", Name: "get_weather", Arguments: `{"city":"Oslo","unit":"celsius"}`}},
		Usage:     fixedUsage(),
	}}))
	req := user("what is the weather?")
	req.Tools = []messages.ToolDefinition{{Name: "get_weather", Description: "Weather by city", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
	resp := chat(t, p, req)
	want := []messages.ToolCall{{ID: "call_weather", Name: "get_weather", Arguments: `{"city":"Oslo","unit":"celsius"}`}}
	if diff := cmp.Diff(want, resp.Message.ToolCalls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if resp.FinishReason != messages.FinishToolCalls || resp.Message.Role != messages.RoleAssistant || resp.Message.Text() != "" {
		t.Errorf("finish %q, role %q, text %q; want tool_calls, assistant, no text", resp.FinishReason, resp.Message.Role, resp.Message.Text())
	}
}

func parallelScript() scripted.Script {
	return stateless(
		scripted.Rule{Match: scripted.Match{Tool: "read_file"}, Reply: scripted.Reply{Text: "Both files read."}},
		scripted.Rule{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			Text: "Reading both.",
			ToolCalls: []scripted.ToolCall{
				{Name: "read_file", Arguments: `{"path":"README.md"}`},
				{Name: "read_file", Arguments: `{"path":"go.mod"}`},
			},
		}},
	)
}

func testChatParallelToolCalls(t *testing.T, np NewProvider) {
	p := np(t, parallelScript())
	resp := chat(t, p, user("read them"))
	calls := resp.Message.ToolCalls
	if len(calls) != 2 {
		t.Fatalf("tool calls = %+v, want 2", calls)
	}
	if calls[0].ID == "" || calls[0].ID == calls[1].ID {
		t.Errorf("call ids %q and %q, want two distinct ids", calls[0].ID, calls[1].ID)
	}
	got := []string{calls[0].Name + " " + calls[0].Arguments, calls[1].Name + " " + calls[1].Arguments}
	if diff := cmp.Diff([]string{`read_file {"path":"README.md"}`, `read_file {"path":"go.mod"}`}, got); diff != "" {
		t.Errorf("calls in order (-want +got):\n%s", diff)
	}
	if resp.Message.Text() != "Reading both." || resp.FinishReason != messages.FinishToolCalls {
		t.Errorf("text %q, finish %q", resp.Message.Text(), resp.FinishReason)
	}
}

func testToolResultRoundTrip(t *testing.T, np NewProvider) {
	p := np(t, parallelScript())
	first := chat(t, p, user("read them"))
	conv := []messages.Message{messages.UserText("read them"), first.Message}
	for _, c := range first.Message.ToolCalls {
		conv = append(conv, messages.ToolResultMessage(c.ID, "contents of "+c.Arguments))
	}
	resp := chat(t, p, messages.Request{Messages: conv})
	if resp.Message.Text() != "Both files read." || resp.FinishReason != messages.FinishStop {
		t.Errorf("reply %q, finish %q; want the answer to the tool results", resp.Message.Text(), resp.FinishReason)
	}
}

func testEstimatedUsage(t *testing.T, np NewProvider) {
	p := np(t, stateless(scripted.Rule{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "a reply of some length"}}))
	for name, u := range map[string]messages.Usage{
		"chat":   chat(t, p, user("count my tokens")).Usage,
		"stream": func() messages.Usage { r, _ := stream(t, p, user("count my tokens")); return r.Usage }(),
	} {
		if u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
			t.Errorf("%s usage = %+v, want positive counts that add up", name, u)
		}
	}
}

func testStreamMatchesChat(t *testing.T, np NewProvider) {
	p := np(t, stateless(
		scripted.Rule{Match: scripted.Match{Exact: "text"}, Reply: scripted.Reply{Text: strings.Repeat("Streaming text, in pieces. ", 8), Usage: fixedUsage()}},
		scripted.Rule{Match: scripted.Match{Exact: "one"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "list_dir", Arguments: `{"path":".","depth":2}`}}}},
		scripted.Rule{Match: scripted.Match{Exact: "two"}, Reply: scripted.Reply{Text: "Two at once.", ToolCalls: []scripted.ToolCall{
			{Name: "read_file", Arguments: `{"path":"a/very/long/path/to/some/file.txt"}`},
			{Name: "grep", Arguments: `{"pattern":"func (.*) Stream","path":"providers","ignore_case":true}`},
		}}},
		scripted.Rule{Match: scripted.Match{Exact: "unicode"}, Reply: scripted.Reply{Text: "héllo wörld — ✓ 日本語", ToolCalls: []scripted.ToolCall{{Name: "echo", Arguments: `{"s":"ünï ✓"}`}}}},
	))
	for _, prompt := range []string{"text", "one", "two", "unicode"} {
		t.Run(prompt, func(t *testing.T) {
			want := chat(t, p, user(prompt))
			got, text := stream(t, p, user(prompt))
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(messages.Response{}, "ID", "Model")); diff != "" {
				t.Errorf("streamed response differs from Chat (-chat +stream):\n%s", diff)
			}
			if text != want.Message.Text() {
				t.Errorf("chunk texts join to %q, want %q", text, want.Message.Text())
			}
			if got.Usage.IsZero() {
				t.Error("the stream reported no usage")
			}
		})
	}
}

func testStreamCancel(t *testing.T, np NewProvider) {
	p := np(t, stateless(scripted.Rule{Match: scripted.Match{Any: true}, Reply: scripted.Reply{
		Text:       strings.Repeat("never ending ", 200),
		ChunkDelay: time.Hour,
	}}))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, err := p.Stream(ctx, user("go on"))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer st.Close()
	if _, err := st.Recv(); err != nil {
		t.Fatalf("first Recv: %v", err)
	}
	cancel()
	for range 10000 { // chunks already buffered may still arrive
		_, err = st.Recv()
		if err != nil {
			break
		}
	}
	switch {
	case err == nil, errors.Is(err, io.EOF):
		t.Fatalf("Recv after cancel = %v, want the stream to end with an error", err)
	case !errors.Is(err, context.Canceled) && providers.KindOf(err) != providers.KindCanceled:
		t.Errorf("Recv after cancel = %v, want context.Canceled or providers.KindCanceled", err)
	}
}

func testCancelledContext(t *testing.T, np NewProvider) {
	p := np(t, stateless(scripted.Rule{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "too late"}}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.Chat(ctx, user("x")); err == nil {
		t.Error("Chat with a cancelled context succeeded")
	}
	st, err := p.Stream(ctx, user("x"))
	if err == nil {
		defer st.Close()
		if _, err = st.Recv(); err == nil {
			t.Error("Stream with a cancelled context delivered a chunk")
		}
	}
}

func testFailures(t *testing.T, np NewProvider) {
	fail := func(f scripted.Failure) *scripted.Failure { return &f }
	p := np(t, stateless(
		scripted.Rule{Match: scripted.Match{Exact: "429"}, Reply: scripted.Reply{Fail: fail(scripted.Failure{Kind: scripted.FailRateLimit, RetryAfter: 2 * time.Second})}},
		scripted.Rule{Match: scripted.Match{Exact: "500"}, Reply: scripted.Reply{Fail: fail(scripted.Failure{Kind: scripted.FailServer})}},
		scripted.Rule{Match: scripted.Match{Exact: "ctx"}, Reply: scripted.Reply{Fail: fail(scripted.Failure{Kind: scripted.FailContextLength})}},
		scripted.Rule{Match: scripted.Match{Exact: "auth"}, Reply: scripted.Reply{Fail: fail(scripted.Failure{Kind: scripted.FailAuth})}},
		scripted.Rule{Match: scripted.Match{Exact: "404"}, Reply: scripted.Reply{Fail: fail(scripted.Failure{Kind: scripted.FailNotFound})}},
	))
	tests := []struct {
		prompt     string
		kind       providers.Kind
		retryAfter time.Duration
	}{
		{"429", providers.KindRateLimited, 2 * time.Second},
		{"500", providers.KindServer, 0},
		{"ctx", providers.KindContextLength, 0},
		{"auth", providers.KindAuthentication, 0},
		{"404", providers.KindNotFound, 0},
	}
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			calls := map[string]func() error{
				"chat": func() error { _, err := p.Chat(t.Context(), user(tt.prompt)); return err },
				"stream": func() error {
					st, err := p.Stream(t.Context(), user(tt.prompt))
					if err != nil {
						return err
					}
					defer st.Close()
					_, err = st.Recv()
					return err
				},
			}
			for name, call := range calls {
				err := call()
				pe, ok := errors.AsType[*providers.Error](err)
				if !ok {
					t.Fatalf("%s: err = %v, want a *providers.Error", name, err)
				}
				if pe.Kind != tt.kind || pe.RetryAfter != tt.retryAfter || pe.Retryable() != tt.kind.Retryable() {
					t.Errorf("%s: kind %v, retry after %v, retryable %v; want %v, %v, %v",
						name, pe.Kind, pe.RetryAfter, pe.Retryable(), tt.kind, tt.retryAfter, tt.kind.Retryable())
				}
			}
		})
	}
}

func testNoMatch(t *testing.T, np NewProvider) {
	p := np(t, stateless(scripted.Rule{Match: scripted.Match{Exact: "only this"}, Reply: scripted.Reply{Text: "ok"}}))
	_, err := p.Chat(t.Context(), user("something else"))
	if providers.KindOf(err) != providers.KindBadRequest || !strings.Contains(fmt.Sprint(err), `no rule matches the last user message "something else"`) {
		t.Errorf("err = %v, want a bad request saying that no rule matches", err)
	}
}

func testConcurrent(t *testing.T, np NewProvider) {
	p := np(t, stateless(scripted.Rule{Match: scripted.Match{Regexp: `^echo `}, Reply: scripted.Reply{Text: "echoed"}},
		scripted.Rule{Match: scripted.Match{Regexp: `^call `}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "f", Arguments: `{"n":1}`}}}}))
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 8 {
		wg.Go(func() {
			for k := range 4 {
				prompt := fmt.Sprintf("echo %d-%d", g, k)
				if k%2 == 1 {
					prompt = fmt.Sprintf("call %d-%d", g, k)
				}
				var resp *messages.Response
				var err error
				if g%2 == 0 {
					resp, err = p.Chat(t.Context(), user(prompt))
				} else {
					var st providers.Stream
					if st, err = p.Stream(t.Context(), user(prompt)); err == nil {
						for _, rerr := range providers.Chunks(st) {
							err = rerr
						}
						resp = st.Response()
						st.Close()
					}
				}
				switch {
				case err != nil:
					errs <- fmt.Errorf("%s: %w", prompt, err)
				case k%2 == 0 && resp.Message.Text() != "echoed",
					k%2 == 1 && (len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"n":1}`):
					errs <- fmt.Errorf("%s: wrong reply %+v", prompt, resp.Message)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
