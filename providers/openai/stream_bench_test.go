package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// replyBody is the SSE body of a typical streamed reply: about 270
// characters of text in 16-character chunks, one tool call whose arguments
// arrive in two fragments, the finish reason and a usage chunk.
func replyBody() []byte {
	var b bytes.Buffer
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 6)
	for i := 0; i < len(text); i += 16 {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"model\":\"scripted\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", text[i:min(i+16, len(text))])
	}
	b.WriteString(`data: {"id":"chatcmpl-1","model":"scripted","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"key\":"}}]},"finish_reason":null}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-1","model":"scripted","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"alpha\"}"}}]},"finish_reason":null}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-1","model":"scripted","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-1","model":"scripted","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":60,"total_tokens":100}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// readReply streams body through the provider's stream decoder to its end
// and returns the number of chunks.
func readReply(a *api, body []byte) (int, error) {
	ctx, cancel := context.WithCancelCause(context.Background())
	s := newStream(a, ctx, cancel, io.NopCloser(bytes.NewReader(body)), nil)
	defer s.Close()
	n := 0
	for {
		_, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// BenchmarkStreamDecode measures the stream read path alone (no HTTP): one
// op reads a typical streamed reply from its SSE body to the end, and
// B/op is what a reply allocates on the way.
func BenchmarkStreamDecode(b *testing.B) {
	a := &api{name: DefaultName, now: time.Now}
	body := replyBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readReply(a, body); err != nil {
			b.Fatal(err)
		}
	}
}
