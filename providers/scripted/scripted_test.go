package scripted_test

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

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
)

// fakeSleep records the waits it is asked for and returns at once.
type fakeSleep struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	return ctx.Err()
}

func newProvider(t *testing.T, s scripted.Script) *scripted.Provider {
	t.Helper()
	p, err := scripted.New(s, scripted.Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func req(msgs ...messages.Message) messages.Request {
	return messages.Request{Messages: msgs}
}

// toolTurn is a conversation where the assistant called name and the tool answered.
func toolTurn(user, name, result string) messages.Request {
	return req(
		messages.UserText(user),
		messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{{ID: "c1", Name: name, Arguments: "{}"}}},
		messages.ToolResultMessage("c1", result),
	)
}

func TestProvider_Match(t *testing.T) {
	s := scripted.Script{Rules: []scripted.Rule{
		{Name: "exact", Match: scripted.Match{Exact: "ping"}, Reply: scripted.Reply{Text: "pong"}},
		{Name: "regexp", Match: scripted.Match{Regexp: `^add (\d+)$`}, Reply: scripted.Reply{Text: "added"}},
		{Name: "tool", Match: scripted.Match{Tool: "read_file"}, Reply: scripted.Reply{Text: "read it"}},
		{Name: "tool text", Match: scripted.Match{Role: messages.RoleTool, Contains: "boom"}, Reply: scripted.Reply{Text: "tool failed"}},
		{Name: "contains", Match: scripted.Match{Role: messages.RoleUser, Contains: "weather"}, Reply: scripted.Reply{Text: "sunny"}},
		{Name: "any", Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "fallback"}},
	}}
	tests := []struct {
		name string
		req  messages.Request
		want string
	}{
		{"exact", req(messages.UserText("ping")), "pong"},
		{"exact is not contains", req(messages.UserText("ping pong")), "fallback"},
		{"regexp", req(messages.UserText("add 42")), "added"},
		{"contains", req(messages.UserText("what is the weather?")), "sunny"},
		{"tool name", toolTurn("go", "read_file", "data"), "read it"},
		{"tool text", toolTurn("go", "bash", "boom"), "tool failed"},
		{"role filter", toolTurn("go", "bash", "weather"), "fallback"},
		{"last user or tool message", req(messages.UserText("ping"), messages.AssistantText("pong"), messages.UserText("add 1")), "added"},
		{"trailing system message ignored", req(messages.UserText("ping"), messages.SystemText("add 1")), "pong"},
		{"parts", req(messages.Message{Role: messages.RoleUser, Content: messages.Content{messages.TextPart("pi"), messages.ImagePart("https://x/y.png", ""), messages.TextPart("ng")}}), "pong"},
	}
	p := newProvider(t, s)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := p.Chat(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if got := resp.Message.Text(); got != tt.want {
				t.Errorf("reply = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProvider_Response(t *testing.T) {
	usage := &messages.Usage{PromptTokens: 12, CompletionTokens: 3}
	s := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Exact: "calls"}, Reply: scripted.Reply{Text: "two", ToolCalls: []scripted.ToolCall{
			{Name: "a", Arguments: `{"x":1}`}, {ID: "given", Name: "b", Arguments: `{}`},
		}}},
		{Match: scripted.Match{Exact: "usage"}, Reply: scripted.Reply{Text: "counted", Usage: usage, FinishReason: messages.FinishLength}},
		{Match: scripted.Match{Exact: "estimate"}, Reply: scripted.Reply{Text: "12345678"}},
	}}
	p := newProvider(t, s)
	history := []messages.Message{messages.UserText("hi"), messages.AssistantText("hello")}

	tests := []struct {
		name string
		req  messages.Request
		want messages.Response
	}{
		{
			name: "tool calls get ids and finish tool_calls",
			req:  messages.Request{Model: "m1", Messages: append(history[:2:2], messages.UserText("calls"))},
			want: messages.Response{Model: "m1", FinishReason: messages.FinishToolCalls, Message: messages.Message{
				Role: messages.RoleAssistant, Content: messages.Text("two"),
				ToolCalls: []messages.ToolCall{{ID: "call_2_1", Name: "a", Arguments: `{"x":1}`}, {ID: "given", Name: "b", Arguments: `{}`}},
			}},
		},
		{
			name: "given usage and finish",
			req:  req(messages.UserText("usage")),
			want: messages.Response{Model: scripted.DefaultModel, FinishReason: messages.FinishLength,
				Message: messages.AssistantText("counted"),
				Usage:   messages.Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15}},
		},
		{
			name: "estimated usage",
			req:  req(messages.UserText("estimate")),
			want: messages.Response{Model: scripted.DefaultModel, FinishReason: messages.FinishStop,
				Message: messages.AssistantText("12345678"),
				Usage:   messages.Usage{PromptTokens: 2, CompletionTokens: 2, TotalTokens: 4}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := p.Chat(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if !strings.HasPrefix(resp.ID, "chatcmpl-scripted-") {
				t.Errorf("ID = %q, want a chatcmpl-scripted- prefix", resp.ID)
			}
			again, err := p.Chat(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("Chat again: %v", err)
			}
			if again.ID != resp.ID {
				t.Errorf("the same request got ids %q and %q", resp.ID, again.ID)
			}
			if tt.want.Usage.IsZero() {
				tt.want.Usage = resp.Usage
			}
			resp.ID = ""
			if diff := cmp.Diff(tt.want, *resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
	if *usage != (messages.Usage{PromptTokens: 12, CompletionTokens: 3}) {
		t.Errorf("the script's usage was modified: %+v", *usage)
	}
}

func TestProvider_StatefulTurns(t *testing.T) {
	s := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Contains: "once"}, Once: true, Reply: scripted.Reply{Text: "first and only"}},
		{Match: scripted.Match{Contains: "turns"}, Turns: []scripted.Reply{{Text: "one"}, {Text: "two"}}},
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "again"}},
	}}
	p := newProvider(t, s)
	var got []string
	for _, msg := range []string{"once", "once", "turns", "turns", "turns", "other"} {
		resp, err := p.Chat(t.Context(), req(messages.UserText(msg)))
		if err != nil {
			t.Fatalf("Chat(%q): %v", msg, err)
		}
		got = append(got, resp.Message.Text())
	}
	want := []string{"first and only", "again", "one", "two", "again", "again"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	if n := p.Calls(); n != 6 {
		t.Errorf("Calls() = %d, want 6", n)
	}
}

func TestProvider_StatelessTurns(t *testing.T) {
	s := scripted.Script{Stateless: true, Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Turns: []scripted.Reply{
			{ToolCalls: []scripted.ToolCall{{Name: "list_dir", Arguments: `{"path":"."}`}}},
			{Text: "listed"},
		}},
	}}
	p := newProvider(t, s)
	first := req(messages.UserText("go"))
	second := toolTurn("go", "list_dir", "a b c")
	third := req(append(second.Messages, messages.AssistantText("listed"), messages.UserText("and?"))...)
	for range 3 { // the same request always gets the same reply
		r1, err := p.Chat(t.Context(), first)
		if err != nil || len(r1.Message.ToolCalls) != 1 || r1.Message.ToolCalls[0].ID != "call_1_1" {
			t.Fatalf("step 0 = %+v, %v; want one call with id call_1_1", r1, err)
		}
		r2, err := p.Chat(t.Context(), second)
		if err != nil || r2.Message.Text() != "listed" {
			t.Fatalf("step 1 = %+v, %v; want text listed", r2, err)
		}
		r3, err := p.Chat(t.Context(), third)
		if err != nil || len(r3.Message.ToolCalls) != 1 || r3.Message.ToolCalls[0].ID != "call_3_1" {
			t.Fatalf("new user message = %+v, %v; want step 0 again with id call_3_1", r3, err)
		}
	}
	past := req(append(second.Messages, messages.AssistantText("listed"), messages.ToolResultMessage("x", "late"))...)
	if _, err := p.Chat(t.Context(), past); !errors.Is(err, scripted.ErrNoMatch) {
		t.Errorf("past the last turn: err = %v, want ErrNoMatch", err)
	}
}

func TestProvider_NoMatch(t *testing.T) {
	p := newProvider(t, scripted.Script{Rules: []scripted.Rule{
		{Name: "secret rule", Match: scripted.Match{Exact: "s3cr3t"}, Reply: scripted.Reply{Text: "hidden"}},
	}})
	tests := []struct {
		name string
		req  messages.Request
		want string
	}{
		{"user", req(messages.SystemText("sys"), messages.UserText("hello")), `scripted: bad request: no rule matches the last user message "hello"`},
		{"tool", toolTurn("x", "grep", "no hits"), `scripted: bad request: no rule matches the last tool message (answering grep) "no hits"`},
		{"no input", req(messages.SystemText("only system")), "scripted: bad request: no rule matches: the request has no user or tool message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Chat(t.Context(), tt.req)
			if !errors.Is(err, scripted.ErrNoMatch) {
				t.Fatalf("err = %v, want ErrNoMatch", err)
			}
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Kind != providers.KindBadRequest || pe.Retryable() {
				t.Errorf("err = %#v, want a non-retryable KindBadRequest *providers.Error", err)
			}
			if err.Error() != tt.want {
				t.Errorf("err = %q, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "hidden") {
				t.Errorf("err %q reveals the script", err)
			}
		})
	}
}

func TestProvider_Failures(t *testing.T) {
	s := scripted.Script{
		Rules: []scripted.Rule{
			{Match: scripted.Match{Contains: "flaky"}, Turns: []scripted.Reply{
				{Fail: &scripted.Failure{Kind: scripted.FailRateLimit, RetryAfter: 2 * time.Second}},
				{Fail: &scripted.Failure{Kind: scripted.FailServer, Message: "overloaded"}},
				{Text: "ok"},
			}},
			{Match: scripted.Match{Contains: "long"}, Reply: scripted.Reply{Fail: &scripted.Failure{Kind: scripted.FailContextLength}}},
			{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "fine"}},
		},
		Failures: []scripted.Injection{{Calls: []int{5}, Failure: scripted.Failure{Kind: scripted.FailTimeout}}},
	}
	p := newProvider(t, s)
	tests := []struct {
		msg        string
		kind       providers.Kind
		status     int
		retryAfter time.Duration
		text       string
	}{
		{msg: "flaky", kind: providers.KindRateLimited, status: 429, retryAfter: 2 * time.Second},
		{msg: "flaky", kind: providers.KindServer, status: 500},
		{msg: "flaky", text: "ok"},
		{msg: "long", kind: providers.KindContextLength, status: 400},
		{msg: "anything", kind: providers.KindTimeout},
		{msg: "anything", text: "fine"},
	}
	for i, tt := range tests {
		resp, err := p.Chat(t.Context(), req(messages.UserText(tt.msg)))
		if tt.text != "" {
			if err != nil || resp.Message.Text() != tt.text {
				t.Errorf("call %d: got %v, %v; want %q", i+1, resp, err, tt.text)
			}
			continue
		}
		var pe *providers.Error
		if !errors.As(err, &pe) {
			t.Fatalf("call %d: err = %v, want a *providers.Error", i+1, err)
		}
		if pe.Kind != tt.kind || pe.Status != tt.status || pe.RetryAfter != tt.retryAfter || pe.Provider != scripted.Name {
			t.Errorf("call %d: got kind %v status %d retry after %v provider %q; want %v %d %v %q",
				i+1, pe.Kind, pe.Status, pe.RetryAfter, pe.Provider, tt.kind, tt.status, tt.retryAfter, scripted.Name)
		}
	}
}

func TestProvider_Latency(t *testing.T) {
	var fs fakeSleep
	p, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "0123456789abcdef", Latency: time.Second, ChunkDelay: 10 * time.Millisecond}},
	}}, scripted.Options{Sleep: fs.sleep, ChunkSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Chat(t.Context(), req(messages.UserText("x"))); err != nil {
		t.Fatal(err)
	}
	st, err := p.Stream(t.Context(), req(messages.UserText("x")))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	for _, err := range providers.Chunks(st) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	// Chat and Stream wait the latency; the stream waits before each chunk after the first.
	want := []time.Duration{time.Second, time.Second}
	for range n - 1 {
		want = append(want, 10*time.Millisecond)
	}
	if diff := cmp.Diff(want, fs.waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.Chat(ctx, req(messages.UserText("x"))); !errors.Is(err, context.Canceled) {
		t.Errorf("Chat with a cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestProvider_LatencyHonoursContext(t *testing.T) {
	p := newProvider(t, scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "slow", Latency: time.Hour}},
	}})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := p.Chat(ctx, req(messages.UserText("x")))
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestProvider_StreamChunks(t *testing.T) {
	p, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "héllo wörld", ToolCalls: []scripted.ToolCall{
			{Name: "read_file", Arguments: `{"path":"README.md"}`},
			{Name: "list_dir", Arguments: `{}`},
		}}},
	}}, scripted.Options{ChunkSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	r := req(messages.UserText("go"))
	want, err := p.Chat(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Stream(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var texts []string
	fragments := map[int]int{}
	var sawFinish, sawUsage bool
	for c, err := range providers.Chunks(st) {
		if err != nil {
			t.Fatal(err)
		}
		if c.ID != want.ID || c.Model != want.Model {
			t.Errorf("chunk id/model = %q/%q, want %q/%q", c.ID, c.Model, want.ID, want.Model)
		}
		if c.Text != "" {
			texts = append(texts, c.Text)
		}
		for _, d := range c.ToolCalls {
			fragments[d.Index]++
		}
		sawFinish = sawFinish || c.FinishReason != ""
		sawUsage = sawUsage || c.Usage != nil
	}
	if diff := cmp.Diff([]string{"héll", "o wö", "rld"}, texts); diff != "" {
		t.Errorf("text pieces (-want +got):\n%s", diff)
	}
	if fragments[0] < 3 || fragments[1] < 3 {
		t.Errorf("fragments per call = %v, want a header and at least two argument pieces each", fragments)
	}
	if !sawFinish || !sawUsage {
		t.Errorf("finish chunk seen %v, usage chunk seen %v; want both", sawFinish, sawUsage)
	}
	if diff := cmp.Diff(want, st.Response()); diff != "" {
		t.Errorf("stream response differs from Chat (-chat +stream):\n%s", diff)
	}
	if _, err := st.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("Recv after the end: %v, want io.EOF", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := st.Recv(); !errors.Is(err, scripted.ErrClosed) {
		t.Errorf("Recv after Close: %v, want ErrClosed", err)
	}
}

func TestProvider_StreamFailures(t *testing.T) {
	p := newProvider(t, scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Exact: "now"}, Reply: scripted.Reply{Fail: &scripted.Failure{Kind: scripted.FailRateLimit, RetryAfter: time.Second}}},
		{Match: scripted.Match{Exact: "later"}, Reply: scripted.Reply{Text: "partial reply", Fail: &scripted.Failure{Kind: scripted.FailServer, AfterChunks: 2}}},
	}})
	if _, err := p.Stream(t.Context(), req(messages.UserText("now"))); providers.KindOf(err) != providers.KindRateLimited {
		t.Errorf("Stream: err = %v, want rate limited", err)
	}
	if _, err := p.Chat(t.Context(), req(messages.UserText("later"))); providers.KindOf(err) != providers.KindServer {
		t.Errorf("Chat of a mid-stream failure: err = %v, want a server error at once", err)
	}
	st, err := p.Stream(t.Context(), req(messages.UserText("later")))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	defer st.Close()
	got := 0
	for _, err := range providers.Chunks(st) {
		if err != nil {
			if providers.KindOf(err) != providers.KindServer {
				t.Errorf("mid-stream err = %v, want a server error", err)
			}
			break
		}
		got++
	}
	if got != 2 {
		t.Errorf("chunks before the failure = %d, want 2", got)
	}
}

func TestProvider_StreamCancel(t *testing.T) {
	p := newProvider(t, scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: strings.Repeat("word ", 100), ChunkDelay: time.Hour}},
	}})
	ctx, cancel := context.WithCancel(t.Context())
	st, err := p.Stream(ctx, req(messages.UserText("go")))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Recv(); err != nil {
		t.Fatalf("first Recv: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.Recv() // blocks in the chunk delay
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Recv after cancel: %v, want context.Canceled", err)
	}
}

func TestProvider_Concurrent(t *testing.T) {
	p := scripted.MustNew(scripted.Demo(), scripted.Options{})
	steps := []messages.Request{
		req(messages.UserText("summarise")),
		toolTurn("summarise", "list_dir", "README.md go.mod"),
		toolTurn("summarise", "read_file", "module x"),
		toolTurn("summarise", "write_file", "written"),
	}
	want := make([]*messages.Response, len(steps))
	for i, r := range steps {
		var err error
		if want[i], err = p.Chat(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for k := range 4 {
				i := (g + k) % len(steps)
				got, err := p.Chat(t.Context(), steps[i])
				if err != nil {
					errs <- err
					return
				}
				if diff := cmp.Diff(want[i], got); diff != "" {
					errs <- fmt.Errorf("step %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := p.Calls(); n != len(steps)+64 {
		t.Errorf("Calls() = %d, want %d", n, len(steps)+64)
	}
}

func TestDemo(t *testing.T) {
	p := scripted.MustNew(scripted.Demo(), scripted.Options{})
	conv := []messages.Message{messages.UserText("Summarise this project.")}
	var calls [][]string
	for range 10 {
		resp, err := p.Chat(t.Context(), messages.Request{Messages: conv})
		if err != nil {
			t.Fatalf("Chat: %v", err)
		}
		conv = append(conv, resp.Message)
		if resp.FinishReason != messages.FinishToolCalls {
			if resp.Message.Text() == "" || resp.FinishReason != messages.FinishStop {
				t.Fatalf("final reply = %+v, want text with finish stop", resp)
			}
			break
		}
		var step []string
		for _, c := range resp.Message.ToolCalls {
			step = append(step, c.Name+" "+c.Arguments)
			conv = append(conv, messages.ToolResultMessage(c.ID, "result of "+c.Name))
		}
		calls = append(calls, step)
	}
	if err := messages.Validate(conv); err != nil {
		t.Errorf("the demo conversation is invalid: %v", err)
	}
	want := [][]string{
		{`list_dir {"path":"."}`},
		{`read_file {"path":"README.md"}`, `read_file {"path":"go.mod"}`},
		{`write_file {"path":"SUMMARY.md","content":"# Summary\n\nThis workspace is a Go module. README.md explains what it does and how to run it; go.mod names the module and its dependencies.\n"}`},
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
}
