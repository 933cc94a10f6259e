package scripted

import (
	"context"
	"io"
	"time"
	"unicode/utf8"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// stream plays precomputed chunks. It keeps the context of the Stream call,
// which bounds the stream's life.
type stream struct {
	ctx    context.Context
	sleep  func(context.Context, time.Duration) error
	delay  time.Duration
	chunks []providers.Chunk
	next   int
	failAt int // the number of chunks sent before failing, or -1
	fail   error
	acc    providers.Accumulator
	closed bool
}

// Recv implements providers.Stream.
func (s *stream) Recv() (providers.Chunk, error) {
	switch {
	case s.closed:
		return providers.Chunk{}, ErrClosed
	case s.ctx.Err() != nil:
		return providers.Chunk{}, s.ctx.Err()
	case s.next == s.failAt:
		return providers.Chunk{}, s.fail
	case s.next >= len(s.chunks):
		return providers.Chunk{}, io.EOF
	}
	if s.next > 0 && s.delay > 0 {
		if err := s.sleep(s.ctx, s.delay); err != nil {
			return providers.Chunk{}, err
		}
	}
	c := s.chunks[s.next]
	s.next++
	s.acc.Add(c)
	return c, nil
}

// Response implements providers.Stream.
func (s *stream) Response() *messages.Response { return s.acc.Response() }

// Close implements providers.Stream.
func (s *stream) Close() error {
	s.closed = true
	return nil
}

// chunksOf cuts resp into stream chunks; see Provider.Stream.
func chunksOf(resp *messages.Response, size int) []providers.Chunk {
	base := providers.Chunk{ID: resp.ID, Model: resp.Model}
	var out []providers.Chunk
	for _, piece := range split(resp.Message.Text(), size) {
		c := base
		c.Text = piece
		out = append(out, c)
	}
	for i, call := range resp.Message.ToolCalls {
		c := base
		c.ToolCalls = []providers.ToolCallDelta{{Index: i, ID: call.ID, Name: call.Name}}
		out = append(out, c)
		n := utf8.RuneCountInString(call.Arguments)
		for _, piece := range split(call.Arguments, min(size, (n+1)/2)) {
			c := base
			c.ToolCalls = []providers.ToolCallDelta{{Index: i, Arguments: piece}}
			out = append(out, c)
		}
	}
	fin := base
	fin.FinishReason = resp.FinishReason
	usage := resp.Usage
	last := base
	last.Usage = &usage
	return append(out, fin, last)
}

// split cuts s into pieces of at most size runes.
func split(s string, size int) []string {
	if s == "" {
		return nil
	}
	size = max(size, 1)
	var out []string
	for s != "" {
		end, n := 0, 0
		for end < len(s) && n < size {
			_, w := utf8.DecodeRuneInString(s[end:])
			end += w
			n++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
