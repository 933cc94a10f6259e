package openai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/openai"
)

// toolCallEvents streams two parallel tool calls whose arguments arrive in
// many fragments, interleaved, then the finish reason, then usage.
var toolCallEvents = []string{
	`{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`,
	`{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\""}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Par"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":": \"Europe/"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"is\", \"unit\": \"°C\"}"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"Paris\"}"}}]},"finish_reason":null}]}`,
	`{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":40,"total_tokens":160,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":8}}}`,
	`[DONE]`,
}

func TestStream_ParallelToolCalls(t *testing.T) {
	s := newServer(t, reply{events: toolCallEvents})
	p, _ := newProvider(t, s, nil)
	st, err := p.Stream(t.Context(), hello)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var deltas []providers.ToolCallDelta
	var usage *messages.Usage
	var finish messages.FinishReason
	for c, err := range providers.Chunks(st) {
		if err != nil {
			t.Fatal(err)
		}
		deltas = append(deltas, c.ToolCalls...)
		if c.Usage != nil {
			usage = c.Usage
		}
		if c.FinishReason != "" {
			finish = c.FinishReason
		}
	}
	if len(deltas) != 7 || deltas[0] != (providers.ToolCallDelta{Index: 0, ID: "call_a", Name: "get_weather"}) ||
		deltas[2] != (providers.ToolCallDelta{Index: 1, ID: "call_b", Name: "get_time", Arguments: `{"tz"`}) {
		t.Errorf("deltas = %+v", deltas)
	}
	wantUsage := messages.Usage{PromptTokens: 120, CompletionTokens: 40, TotalTokens: 160, CachedPromptTokens: 64, ReasoningTokens: 8}
	if usage == nil || *usage != wantUsage || finish != messages.FinishToolCalls {
		t.Errorf("usage chunk %+v, finish %q", usage, finish)
	}
	want := &messages.Response{
		ID: "chatcmpl-9", Model: "gpt-4o-mini",
		Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{
			{ID: "call_a", Name: "get_weather", Arguments: `{"city": "Paris", "unit": "°C"}`},
			{ID: "call_b", Name: "get_time", Arguments: `{"tz": "Europe/Paris"}`},
		}},
		FinishReason: messages.FinishToolCalls,
		Usage:        wantUsage,
	}
	if d := cmp.Diff(want, st.Response()); d != "" {
		t.Errorf("Response (-want +got):\n%s", d)
	}
	body := s.body(t, 0)
	if body["stream"] != true || fmt.Sprint(body["stream_options"]) != "map[include_usage:true]" {
		t.Errorf("stream = %v, stream_options = %v", body["stream"], body["stream_options"])
	}
	if s.requests() != 1 {
		t.Errorf("requests = %d, want 1", s.requests())
	}
}

func TestStream_Text(t *testing.T) {
	s := newServer(t, reply{events: []string{chunk("Hel", ""), chunk("lo", ""), chunk("", "stop"), "[DONE]"}})
	p, _ := newProvider(t, s, nil)
	st, err := p.Stream(t.Context(), hello)
	if err != nil {
		t.Fatal(err)
	}
	text, err := drain(st)
	if err != nil || text != "Hello" {
		t.Fatalf("stream = %q, %v", text, err)
	}
	if r := st.Response(); r.Message.Text() != "Hello" || r.FinishReason != messages.FinishStop {
		t.Errorf("Response = %+v", r)
	}
	// After the end, Recv keeps returning io.EOF, and Close is idempotent.
	if _, err := st.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("Recv after end = %v, want io.EOF", err)
	}
	if err := st.Close(); err != nil {
		t.Error(err)
	}
	if err := st.Close(); err != nil {
		t.Error(err)
	}
}

// rawServer answers every request by writing raw bytes on the hijacked
// connection and closing it.
func rawServer(t *testing.T, raw string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	n := new(atomic.Int32)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.Copy(io.Discard, r.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		buf.WriteString(raw)
		buf.Flush()
	}))
	t.Cleanup(s.Close)
	return s, n
}

const sseHeader = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"

func chunked(parts ...string) string {
	var b []byte
	for _, p := range parts {
		b = fmt.Appendf(b, "%x\r\n%s\r\n", len(p), p)
	}
	return string(b)
}

func TestStream_Endings(t *testing.T) {
	data := func(payloads ...string) string {
		var b []byte
		for _, p := range payloads {
			b = fmt.Appendf(b, "data: %s\n\n", p)
		}
		return string(b)
	}
	tests := []struct {
		name     string
		raw      string
		text     string // received before the end
		wantErr  bool
		kind     providers.Kind
		cut      bool // errors.Is(err, io.ErrUnexpectedEOF)
		requests int
	}{
		{"cut mid-stream, close-delimited body",
			sseHeader + "Connection: close\r\n\r\n" + data(chunk("Hel", ""), chunk("lo", "")),
			"Hello", true, providers.KindTimeout, true, 1},
		{"cut mid-stream inside a line",
			sseHeader + "Connection: close\r\n\r\n" + data(chunk("Hel", "")) + `data: {"id":"chatcmpl-1","choi`,
			"Hel", true, providers.KindTimeout, true, 1},
		{"cut mid-stream, chunked body",
			sseHeader + "Transfer-Encoding: chunked\r\n\r\n" + chunked(data(chunk("Hel", "")), data(chunk("lo", ""))),
			"Hello", true, providers.KindTimeout, true, 1},
		{"cut before the first chunk is retried",
			sseHeader + "Connection: close\r\n\r\n" + ": keep-alive\n\n",
			"", true, providers.KindTimeout, true, 3},
		{"ends after the finish reason without [DONE]",
			sseHeader + "Connection: close\r\n\r\n" + data(chunk("Hi", "stop")),
			"Hi", false, 0, false, 1},
		{"[DONE] without a final newline",
			sseHeader + "Connection: close\r\n\r\n" + data(chunk("Hi", "")) + "data: [DONE]",
			"Hi", false, 0, false, 1},
		{"comments, event fields, CRLF and data without a space",
			sseHeader + "Connection: close\r\n\r\n" + ": ping\r\nevent: message\r\nid: 1\r\nretry: 10\r\ndata:" + chunk("Hi", "") + "\r\n\r\ndata:\r\n\r\ndata: [DONE]\r\n\r\n",
			"Hi", false, 0, false, 1},
		{"error event mid-stream",
			sseHeader + "Connection: close\r\n\r\n" + data(chunk("Hi", ""), `{"error":{"message":"overloaded","type":"server_error"}}`),
			"Hi", true, providers.KindServer, false, 1},
		{"bare JSON error line",
			sseHeader + "Connection: close\r\n\r\n" + data(chunk("Hi", "")) + `{"error":"quota exhausted","code":"rate_limit_exceeded"}` + "\n",
			"Hi", true, providers.KindServer, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, n := rawServer(t, tt.raw)
			w := &waits{}
			p, err := openai.New(openai.Options{BaseURL: s.URL, Model: "m",
				Retry: &providers.RetryPolicy{Sleep: w.sleep}})
			if err != nil {
				t.Fatal(err)
			}
			st, err := p.Stream(t.Context(), hello)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			text, err := drain(st)
			if text != tt.text {
				t.Errorf("text = %q, want %q", text, tt.text)
			}
			if st.Response().Message.Text() != tt.text {
				t.Errorf("Response text = %q, want %q", st.Response().Message.Text(), tt.text)
			}
			if got := int(n.Load()); got != tt.requests {
				t.Errorf("requests = %d, want %d", got, tt.requests)
			}
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("err = %v, want a clean end", err)
				}
				return
			}
			checkError(t, err, tt.kind, 0, "")
			if got := errors.Is(err, io.ErrUnexpectedEOF); got != tt.cut {
				t.Errorf("errors.Is(err, io.ErrUnexpectedEOF) = %v, want %v (err %v)", got, tt.cut, err)
			}
			// The failure is final.
			if _, again := st.Recv(); again == nil || errors.Is(again, io.EOF) {
				t.Errorf("Recv after failure = %v, want the failure again", again)
			}
		})
	}
}

func TestStream_MalformedLine(t *testing.T) {
	s := newServer(t, reply{events: []string{chunk("Hel", ""), `{"id": nope}`, chunk("lo", "stop"), "[DONE]"}})
	p, w := newProvider(t, s, nil)
	st, err := p.Stream(t.Context(), hello)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if c, err := st.Recv(); err != nil || c.Text != "Hel" {
		t.Fatalf("first Recv = %+v, %v", c, err)
	}
	_, err = st.Recv()
	checkError(t, err, providers.KindOther, 0, "nope")
	if !errors.Is(err, openai.ErrMalformedChunk) {
		t.Errorf("err = %v, want ErrMalformedChunk", err)
	}
	// The stream goes on after a malformed line.
	rest, err := drain(st)
	if err != nil || rest != "lo" || st.Response().Message.Text() != "Hello" {
		t.Errorf("after the malformed line: %q, %v, response %q", rest, err, st.Response().Message.Text())
	}
	if s.requests() != 1 || len(w.get()) != 0 {
		t.Errorf("requests = %d, waits %v; want 1 and none", s.requests(), w.get())
	}
}

func TestStream_MalformedFirstLineIsNotRetried(t *testing.T) {
	s := newServer(t, reply{events: []string{`not json`, "[DONE]"}})
	p, _ := newProvider(t, s, nil)
	st, err := p.Stream(t.Context(), hello)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = drain(st)
	checkError(t, err, providers.KindOther, 0, "")
	if s.requests() != 1 {
		t.Errorf("requests = %d, want 1", s.requests())
	}
}

func TestStream_ContextDeadline(t *testing.T) {
	s := newServer(t, reply{events: []string{chunk("Hi", "")}, block: true})
	p, _ := newProvider(t, s, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	st, err := p.Stream(ctx, hello)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	text, err := drain(st)
	if text != "Hi" {
		t.Errorf("text = %q, want Hi", text)
	}
	checkError(t, err, providers.KindTimeout, 0, "")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want errors.Is context.DeadlineExceeded", err)
	}
	if s.requests() != 1 {
		t.Errorf("requests = %d, want 1", s.requests())
	}
}

func TestStream_IdleTimeout(t *testing.T) {
	tests := []struct {
		name     string
		reply    reply
		text     string
		requests int
	}{
		// Quiet after the first chunk: the stream fails, no retry.
		{"idle after a chunk", reply{events: []string{chunk("Hi", "")}, block: true}, "Hi", 1},
		// Quiet before the first chunk: each attempt times out and is retried.
		{"idle before the first chunk", reply{block: true}, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.reply)
			p, _ := newProvider(t, s, func(o *openai.Options) { o.Timeout = 50 * time.Millisecond })
			st, err := p.Stream(t.Context(), hello)
			var text string
			if err == nil {
				defer st.Close()
				text, err = drain(st)
			}
			if text != tt.text {
				t.Errorf("text = %q, want %q", text, tt.text)
			}
			checkError(t, err, providers.KindTimeout, 0, "")
			if !errors.Is(err, openai.ErrIdle) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want ErrIdle and context.DeadlineExceeded", err)
			}
			if s.requests() != tt.requests {
				t.Errorf("requests = %d, want %d", s.requests(), tt.requests)
			}
		})
	}
}

func TestStream_RecvAfterClose(t *testing.T) {
	s := newServer(t, reply{events: []string{chunk("Hi", "")}, block: true})
	p, _ := newProvider(t, s, nil)
	st, err := p.Stream(t.Context(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, err = st.Recv()
	checkError(t, err, providers.KindCanceled, 0, "closed")
}

// TestStream_LongLine checks that a data line longer than the read buffer
// is assembled.
func TestStream_LongLine(t *testing.T) {
	long := make([]byte, 200_000)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	s := newServer(t, reply{events: []string{chunk(string(long), "stop"), "[DONE]"}})
	p, _ := newProvider(t, s, nil)
	st, err := p.Stream(t.Context(), hello)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	text, err := drain(st)
	if err != nil || text != string(long) {
		t.Errorf("got %d bytes, %v; want %d", len(text), err, len(long))
	}
}
