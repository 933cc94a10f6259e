package openai

import (
	"bufio"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/providers"
)

// countReaders makes a's pool count the read buffers it creates.
func countReaders(a *api) *atomic.Int64 {
	var n atomic.Int64
	a.readers.p.New = func() any {
		n.Add(1)
		return bufio.NewReaderSize(nil, readBufferSize)
	}
	return &n
}

// TestStream_ReadBufferReused reads replies one after the other and checks
// that they share read buffers instead of allocating one (32 KiB) each:
// few buffers are created, and a reply allocates less than one buffer's
// worth of bytes in all.
func TestStream_ReadBufferReused(t *testing.T) {
	a := &api{name: DefaultName, now: time.Now}
	created := countReaders(a)
	body := replyBody()
	const replies = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range replies {
		n, err := readReply(a, body)
		if err != nil || n == 0 {
			t.Fatalf("readReply = %d chunks, %v", n, err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := created.Load(); got >= replies/2 {
		t.Errorf("%d read buffers created for %d replies read one after the other, want them reused", got, replies)
	}
	perReply := (after.TotalAlloc - before.TotalAlloc) / replies
	if !raceEnabled && perReply >= readBufferSize {
		t.Errorf("a reply allocated %d bytes, want less than the %d of its read buffer", perReply, readBufferSize)
	}
}

// TestStream_ReadBufferNotShared interleaves two open streams of one
// provider and reads a closed one again: each stream reads its own body
// only, and a closed stream whose buffer went back to the pool (and to the
// other stream) reports that it is closed instead of reading someone
// else's data.
func TestStream_ReadBufferNotShared(t *testing.T) {
	a := &api{name: DefaultName, now: time.Now}
	open := func(text string) *stream {
		var b strings.Builder
		for _, w := range strings.Fields(text) {
			b.WriteString(`data: {"choices":[{"index":0,"delta":{"content":"` + w + ` "},"finish_reason":null}]}` + "\n\n")
		}
		b.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
		ctx, cancel := context.WithCancelCause(context.Background())
		return newStream(a, ctx, cancel, io.NopCloser(strings.NewReader(b.String())), nil)
	}
	s1, s2 := open("one two three four"), open("uno dos tres cuatro")
	var got1, got2 strings.Builder
	for {
		c1, err1 := s1.Recv()
		c2, err2 := s2.Recv()
		got1.WriteString(c1.Text)
		got2.WriteString(c2.Text)
		if errors.Is(err1, io.EOF) && errors.Is(err2, io.EOF) {
			break
		}
		if err1 != nil && !errors.Is(err1, io.EOF) || err2 != nil && !errors.Is(err2, io.EOF) {
			t.Fatalf("Recv = %v, %v", err1, err2)
		}
	}
	if got1.String() != "one two three four " || got2.String() != "uno dos tres cuatro " {
		t.Fatalf("streams read %q and %q", got1.String(), got2.String())
	}

	s3 := open("alpha beta")
	if c, err := s3.Recv(); err != nil || c.Text != "alpha " {
		t.Fatalf("first Recv = %+v, %v", c, err)
	}
	if err := s3.Close(); err != nil {
		t.Fatal(err)
	}
	s4 := open("gamma delta")
	defer s4.Close()
	if c, err := s4.Recv(); err != nil || c.Text != "gamma " {
		t.Fatalf("Recv on the next stream = %+v, %v", c, err)
	}
	c, err := s3.Recv()
	if pe, ok := errors.AsType[*providers.Error](err); !ok || pe.Kind != providers.KindCanceled || c.Text != "" {
		t.Fatalf("Recv after Close = %+v, %v; want a canceled error and no data", c, err)
	}
	if got := s4.Response().Message.Text(); got != "gamma " {
		t.Fatalf("next stream's response %q", got)
	}
}
