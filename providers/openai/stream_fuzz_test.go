package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/providers"
)

// FuzzStream feeds arbitrary bytes to the stream decoder as a response
// body. The stream must end (io.EOF or one final error) without panicking,
// every error but a malformed line must be a *providers.Error, and the
// assembled response must hold exactly the text that was streamed. Every
// input is read through one provider, so each reuses read buffers earlier
// inputs gave back.
func FuzzStream(f *testing.F) {
	for _, seed := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\ndata: [DONE]\n\n",
		"data:{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\"}}]}}]}\r\n\r\n",
		": ping\nevent: x\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\n",
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\n\ndata: [DONE]",
		"data: not json\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n",
		"{\"error\":\"bare\"}\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"cut",
	} {
		f.Add([]byte(seed))
	}
	a := &api{name: DefaultName, now: time.Now}
	f.Fuzz(func(t *testing.T, body []byte) {
		ctx, cancel := context.WithCancelCause(context.Background())
		s := newStream(a, ctx, cancel, io.NopCloser(bytes.NewReader(body)), nil)
		defer s.Close()
		var text strings.Builder
		for i := 0; ; i++ {
			if i > len(body)+2 {
				t.Fatalf("stream did not end after %d calls", i)
			}
			c, err := s.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, ErrMalformedChunk) {
				continue
			}
			if err != nil {
				if _, ok := errors.AsType[*providers.Error](err); !ok {
					t.Fatalf("error %v (%T) is not a *providers.Error", err, err)
				}
				if _, again := s.Recv(); again != err {
					t.Fatalf("Recv after the failure = %v, want %v", again, err)
				}
				break
			}
			text.WriteString(c.Text)
		}
		if got := s.Response().Message.Text(); got != text.String() {
			t.Fatalf("Response text %q, streamed %q", got, text.String())
		}
	})
}
