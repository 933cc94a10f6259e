package openai

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/messages"
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

// TestStream_AllocationsSkipWhatChunksDoNotCarry streams chunks that hold
// large members a Chunk has no place for (log probabilities of every
// token, content filter results): decoding them allocates no more than
// decoding the same chunks without those members, give or take a few
// kilobytes, since nothing is built for them. Under the race detector
// sync.Pool drops what it is given at random, so the long lines' read
// buffer is grown again at random and the figures mean nothing: the test
// runs without it (CI's allocation step).
func TestStream_AllocationsSkipWhatChunksDoNotCarry(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without the race detector")
	}
	var logprobs strings.Builder
	logprobs.WriteString(`"logprobs":{"content":[`)
	for i := range 200 {
		if i > 0 {
			logprobs.WriteString(",")
		}
		logprobs.WriteString(`{"token":"tok","logprob":-0.25,"bytes":[116,111,107],"top_logprobs":[{"token":"a","logprob":-1.5,"bytes":[97]}]}`)
	}
	logprobs.WriteString(`]},"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}},`)
	body := func(extra string) []byte {
		var b strings.Builder
		for _, w := range strings.Fields("one two three four five six seven eight") {
			b.WriteString(`data: {"id":"c","model":"m","choices":[{"index":0,` + extra + `"delta":{"content":"` + w + ` "},"finish_reason":null}]}` + "\n\n")
		}
		b.WriteString(`data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
		return []byte(b.String())
	}
	a := &api{name: DefaultName, now: time.Now}
	// The process-wide counters also see what other goroutines allocate
	// meanwhile, which only ever adds: the least of a few rounds is the
	// reply's own cost.
	allocated := func(b []byte) uint64 {
		const replies, rounds = 20, 5
		least := uint64(math.MaxUint64)
		for range rounds {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range replies {
				if n, err := readReply(a, b); err != nil || n != 9 {
					t.Fatalf("readReply = %d chunks, %v", n, err)
				}
			}
			runtime.ReadMemStats(&after)
			least = min(least, (after.TotalAlloc-before.TotalAlloc)/replies)
		}
		return least
	}
	plain, heavy := allocated(body("")), allocated(body(logprobs.String()))
	// Decoding the log probabilities would cost over 100 KB a reply; the
	// few kilobytes allowed are the buffer for lines this long, grown
	// again when a collection has emptied the pool that keeps it.
	if heavy > plain+4096 {
		t.Errorf("a reply allocated %d bytes with log probabilities, %d without, want about the same", heavy, plain)
	}
}

// TestStream_DecodeAllocations checks what reading a typical reply (18
// chunks) allocates: its chunks are decoded by hand, without reflection, so
// a reply costs a few allocations per chunk (its text, and the tool call's
// fragments), not the dozen per chunk of encoding/json.
func TestStream_DecodeAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without the race detector")
	}
	a := &api{name: DefaultName, now: time.Now}
	body := replyBody()
	const limit = 90
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := readReply(a, body); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > limit {
		t.Errorf("reading a reply allocated %v times, want at most %d", allocs, limit)
	}
}

// cannedTransport answers every request with body, as a streamed reply,
// without a network.
type cannedTransport struct{ body []byte }

func (c cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(bytes.NewReader(c.body)),
		Request: req,
	}, nil
}

// TestStream_OneReaderPerCall checks what a streamed call allocates around
// the reply: the body is read through the provider's pooled reader only,
// not also wrapped in go-openai's own 4 KiB reader, which this package
// never reads.
func TestStream_OneReaderPerCall(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without the race detector")
	}
	p, err := New(Options{BaseURL: "http://127.0.0.1:1/v1", Model: "m",
		HTTPClient: &http.Client{Transport: cannedTransport{body: replyBody()}}})
	if err != nil {
		t.Fatal(err)
	}
	req := messages.Request{Messages: []messages.Message{messages.UserText("hi")}}
	call := func() {
		s, err := p.Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range providers.Chunks(s) {
			if err != nil {
				t.Fatal(err)
			}
		}
		_ = s.Close()
	}
	call()
	const calls = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		call()
	}
	runtime.ReadMemStats(&after)
	const limit = 4096
	if perCall := (after.TotalAlloc - before.TotalAlloc) / calls; perCall-replyAllocBytes(t) >= limit {
		t.Errorf("a streamed call allocated %d bytes, %d of them around the reply; want under %d around it",
			perCall, perCall-replyAllocBytes(t), limit)
	}
}

// replyAllocBytes returns what reading replyBody allocates on its own.
func replyAllocBytes(t *testing.T) uint64 {
	t.Helper()
	a := &api{name: DefaultName, now: time.Now}
	body := replyBody()
	const n = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := readReply(a, body); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / n
}
