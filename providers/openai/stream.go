package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// stream is a reply being streamed. It keeps the context of the call that
// opened it: the stream lives as long as that context, and its cause tells
// an idle timeout from a cancellation.
type stream struct {
	a      *api
	ctx    context.Context
	cancel context.CancelCauseFunc
	body   io.ReadCloser
	idle   *time.Timer // nil without an idle bound
	sse    *sseReader
	acc    providers.Accumulator

	// seen and wire serve the decoding of the next chunk: the id and
	// model of the last one, and the chunk decoded last, whose choices'
	// backing array the next one reuses (decode allocates no chunk).
	seen chunkStrings
	wire wireChunk

	finished bool  // a finish reason was received
	err      error // sticky: io.EOF after the end, or the failure

	closeOnce sync.Once
	closeErr  error
}

var _ providers.Stream = (*stream)(nil)

func newStream(a *api, ctx context.Context, cancel context.CancelCauseFunc, body io.ReadCloser, idle *time.Timer) *stream {
	s := &stream{a: a, ctx: ctx, cancel: cancel, body: body, idle: idle}
	var r io.Reader = body
	if idle != nil {
		r = &idleReader{r: body, t: idle, d: a.timeout}
	}
	s.sse = newSSEReader(&a.readers, r)
	return s
}

// wireChunk is one streamed event: a chunk, or an error event. It holds
// the members of go-openai's ChatCompletionStreamResponse that a Chunk
// carries, and nothing else, so that decoding skips the rest.
type wireChunk struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Choices []wireChoice    `json:"choices"`
	Usage   *oai.Usage      `json:"usage,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`

	// room holds the usage the hand-written decoder reads, which Usage
	// then points at, so that a chunk's usage costs no allocation.
	room struct {
		usage  oai.Usage
		prompt oai.PromptTokensDetails
		reply  oai.CompletionTokensDetails
	}
}

// wireChoice is one choice of a streamed chunk.
type wireChoice struct {
	Index int `json:"index"`
	Delta struct {
		Content   string         `json:"content"`
		ToolCalls []wireToolCall `json:"tool_calls"`
	} `json:"delta"`
	FinishReason oai.FinishReason `json:"finish_reason"`
}

// wireToolCall is a fragment of a tool call in a streamed chunk.
type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Recv implements providers.Stream. A malformed data line is returned as an
// error wrapping ErrMalformedChunk without ending the stream; any other
// error ends it, and later calls return the same error.
func (s *stream) Recv() (providers.Chunk, error) {
	if s.err != nil {
		return providers.Chunk{}, s.err
	}
	for {
		payload, err := s.sse.next()
		switch {
		case errors.Is(err, io.EOF) && s.finished:
			return providers.Chunk{}, s.end(io.EOF)
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) && s.ctx.Err() == nil:
			return providers.Chunk{}, s.end(&providers.Error{Kind: providers.KindTimeout, Provider: s.a.name, Err: ErrStreamCut})
		case err != nil:
			return providers.Chunk{}, s.end(s.a.classify(s.ctx, err, nil))
		case bytes.Equal(payload, doneMarker):
			s.drain()
			return providers.Chunk{}, s.end(io.EOF)
		}
		c, err := s.decode(payload)
		if errors.Is(err, ErrMalformedChunk) {
			return providers.Chunk{}, err
		}
		if err != nil {
			return providers.Chunk{}, s.end(err)
		}
		s.acc.Add(c)
		if c.FinishReason != "" {
			s.finished = true
		}
		if meaningful(c) {
			return c, nil
		}
	}
}

// decode parses one payload into a chunk, or into the error it reports:
// by hand when it has the usual shape (decodeChunk), with encoding/json
// otherwise.
func (s *stream) decode(payload []byte) (providers.Chunk, error) {
	w := &s.wire
	*w = wireChunk{Choices: w.Choices[:0]}
	if decodeChunk(payload, w, &s.seen) {
		return fromStreamChunk(w), nil
	}
	*w = wireChunk{}
	if err := json.Unmarshal(payload, w); err != nil {
		return providers.Chunk{}, &providers.Error{
			Kind: providers.KindOther, Provider: s.a.name,
			Message: truncate(string(payload), maxMessage),
			Err:     fmt.Errorf("%w: %w", ErrMalformedChunk, err),
		}
	}
	if len(w.Error) > 0 && !bytes.Equal(w.Error, []byte("null")) {
		return providers.Chunk{}, s.a.classify(s.ctx, apiError(w.Error), nil)
	}
	return fromStreamChunk(w), nil
}

// The bounds of drain.
const (
	// drainLimit is the most drain reads after [DONE].
	drainLimit = 4 << 10
	// drainWait is the longest drain waits for the end of the body.
	drainWait = 200 * time.Millisecond
)

// errDrainWait ends a body that did not end within drainWait of [DONE].
var errDrainWait = errors.New("openai: no end of the response body after [DONE]")

// drain reads the response body to its end after [DONE], up to drainLimit
// bytes and drainWait. A server commonly flushes [DONE] and ends a chunked
// body in a second write; a body closed before the transport read its end
// takes the connection with it, and the next request pays a new connection
// (a TCP and a TLS handshake). A server that keeps sending, or keeps the
// body open, after [DONE] loses the connection after these bounds instead.
func (s *stream) drain() {
	t := time.AfterFunc(drainWait, func() { s.cancel(errDrainWait) })
	_, _ = io.CopyN(io.Discard, s.sse.r, drainLimit)
	t.Stop()
}

// end makes err the stream's final result and releases the connection.
func (s *stream) end(err error) error {
	s.err = err
	_ = s.Close()
	return err
}

// Response implements providers.Stream.
func (s *stream) Response() *messages.Response { return s.acc.Response() }

// errClosed is what Recv returns after Close.
var errClosed = errors.New("openai: stream closed")

// Close implements providers.Stream. Recv after Close fails with Kind
// canceled. Close gives the stream's read buffer back to the provider's
// pool, so it must not run while Recv does (a Stream is used by one
// goroutine).
func (s *stream) Close() error {
	if s.err == nil {
		s.err = &providers.Error{Kind: providers.KindCanceled, Provider: s.a.name, Err: errClosed}
	}
	s.closeOnce.Do(func() {
		if s.idle != nil {
			s.idle.Stop()
		}
		s.closeErr = s.body.Close()
		s.cancel(context.Canceled)
		s.sse.release()
	})
	return s.closeErr
}

// idleReader re-arms the idle timer each time data arrives.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.t.Reset(r.d)
	}
	return n, err
}
