package providers_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// flaky is a Provider whose n-th call (Chat or Stream) fails with errs[n]
// while errs lasts. A stream it opens yields chunks, after failing its first
// Recv with recvErrs[n] when that is set.
type flaky struct {
	mu       sync.Mutex
	calls    int
	errs     []error
	recvErrs []error
	chunks   []providers.Chunk
	closed   int
}

func (f *flaky) next() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.calls
	f.calls++
	if n < len(f.errs) && f.errs[n] != nil {
		return n, f.errs[n]
	}
	return n, nil
}

func (f *flaky) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	if _, err := f.next(); err != nil {
		return nil, err
	}
	return &messages.Response{Message: messages.AssistantText("hi")}, nil
}

func (f *flaky) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	n, err := f.next()
	if err != nil {
		return nil, err
	}
	s := &sliceStream{f: f, chunks: f.chunks}
	if n < len(f.recvErrs) {
		s.firstErr = f.recvErrs[n]
	}
	return s, nil
}

type sliceStream struct {
	f        *flaky
	firstErr error
	chunks   []providers.Chunk
	acc      providers.Accumulator
	closed   bool
}

func (s *sliceStream) Recv() (providers.Chunk, error) {
	if err := s.firstErr; err != nil {
		s.firstErr = nil
		return providers.Chunk{}, err
	}
	if len(s.chunks) == 0 {
		return providers.Chunk{}, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	s.acc.Add(c)
	return c, nil
}

func (s *sliceStream) Response() *messages.Response { return s.acc.Response() }

func (s *sliceStream) Close() error {
	if !s.closed {
		s.closed = true
		s.f.mu.Lock()
		s.f.closed++
		s.f.mu.Unlock()
	}
	return nil
}

func TestWithRetry_Chat(t *testing.T) {
	tests := []struct {
		name      string
		errs      []error
		wantCalls int
		wantKind  providers.Kind
		wantErr   bool
	}{
		{"two server errors then success", []error{errServer, errServer}, 3, 0, false},
		{"three server errors use the 3 attempts", []error{errServer, errServer, errServer}, 3, providers.KindServer, true},
		{"authentication", []error{errAuth}, 1, providers.KindAuthentication, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &flaky{errs: tt.errs}
			rec := &recorder{}
			p := providers.WithRetry(f, providers.RetryPolicy{Sleep: rec.sleep})
			resp, err := p.Chat(t.Context(), messages.Request{})
			if f.calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", f.calls, tt.wantCalls)
			}
			if tt.wantErr {
				if providers.KindOf(err) != tt.wantKind {
					t.Errorf("err = %v, want kind %v", err, tt.wantKind)
				}
				return
			}
			if err != nil || resp.Message.Text() != "hi" {
				t.Errorf("Chat = %v, %v", resp, err)
			}
		})
	}
}

func TestWithRetry_Stream(t *testing.T) {
	chunks := []providers.Chunk{{Text: "a"}, {Text: "b", FinishReason: messages.FinishStop}}
	tests := []struct {
		name       string
		errs       []error
		recvErrs   []error
		wantCalls  int
		wantKind   providers.Kind // of the first error seen, when wantErr
		wantErr    bool
		wantDelays int
	}{
		{"open fails twice", []error{errServer, errServer}, nil, 3, 0, false, 2},
		{"open fails for good", []error{errServer, errServer, errServer}, nil, 3, providers.KindServer, true, 2},
		{"open not retryable", []error{errAuth}, nil, 1, providers.KindAuthentication, true, 0},
		{"first recv fails then reopens", nil, []error{errServer, errServer}, 3, 0, false, 2},
		{"open and recv failures share the budget", []error{errServer, nil, errServer},
			[]error{nil, errServer, nil}, 3, providers.KindServer, true, 2},
		{"first recv not retryable", nil, []error{errAuth}, 1, providers.KindAuthentication, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &flaky{errs: tt.errs, recvErrs: tt.recvErrs, chunks: chunks}
			rec := &recorder{}
			p := providers.WithRetry(f, providers.RetryPolicy{Sleep: rec.sleep})
			s, err := p.Stream(t.Context(), messages.Request{})
			if err == nil {
				defer s.Close()
				var text string
				for c, cerr := range providers.Chunks(s) {
					if cerr != nil {
						err = cerr
						break
					}
					text += c.Text
				}
				if err == nil && (text != "ab" || s.Response().Message.Text() != "ab") {
					t.Errorf("text = %q, response = %q; want ab", text, s.Response().Message.Text())
				}
			}
			if f.calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", f.calls, tt.wantCalls)
			}
			if len(rec.delays) != tt.wantDelays {
				t.Errorf("waits = %v, want %d", rec.delays, tt.wantDelays)
			}
			if (err != nil) != tt.wantErr || tt.wantErr && providers.KindOf(err) != tt.wantKind {
				t.Errorf("err = %v (kind %v), want error %v of kind %v", err, providers.KindOf(err), tt.wantErr, tt.wantKind)
			}
			// Every stream but the last one was closed by the wrapper.
			if opened := f.calls - len(nonNil(tt.errs)); opened > 0 && f.closed < opened-1 {
				t.Errorf("closed %d of %d abandoned streams", f.closed, opened-1)
			}
		})
	}
}

func nonNil(errs []error) []error {
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

func TestWithRetry_StreamErrorAfterFirstChunkIsNotRetried(t *testing.T) {
	f := &flaky{chunks: []providers.Chunk{{Text: "a"}}}
	midErr := &providers.Error{Kind: providers.KindTimeout, Err: io.ErrUnexpectedEOF}
	p := providers.WithRetry(providerFunc(func(ctx context.Context) (providers.Stream, error) {
		s, err := f.Stream(ctx, messages.Request{})
		if err != nil {
			return nil, err
		}
		return &failAfter{Stream: s, err: midErr}, nil
	}), providers.RetryPolicy{Sleep: (&recorder{}).sleep})
	s, err := p.Stream(t.Context(), messages.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c, err := s.Recv(); err != nil || c.Text != "a" {
		t.Fatalf("Recv = %v, %v", c, err)
	}
	if _, err := s.Recv(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want the mid-stream error", err)
	}
	if f.calls != 1 {
		t.Errorf("streams opened = %d, want 1", f.calls)
	}
}

func TestWithRetry_StreamCancelDuringWait(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	f := &flaky{errs: []error{errServer}}
	p := providers.WithRetry(f, providers.RetryPolicy{Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}})
	_, err := p.Stream(ctx, messages.Request{})
	if !errors.Is(err, context.Canceled) || f.calls != 1 {
		t.Errorf("err = %v after %d calls, want context.Canceled after 1", err, f.calls)
	}
}

// providerFunc is a Provider whose Stream is a func; Chat is unused.
type providerFunc func(ctx context.Context) (providers.Stream, error)

func (p providerFunc) Chat(context.Context, messages.Request) (*messages.Response, error) {
	return nil, errors.New("chat is not used by this test")
}

func (p providerFunc) Stream(ctx context.Context, _ messages.Request) (providers.Stream, error) {
	return p(ctx)
}

// failAfter yields its stream's chunks and then err instead of io.EOF.
type failAfter struct {
	providers.Stream
	err error
}

func (s *failAfter) Recv() (providers.Chunk, error) {
	c, err := s.Stream.Recv()
	if errors.Is(err, io.EOF) {
		return c, s.err
	}
	return c, err
}

// TestSingleAttempt checks that the retry layers of a provider can be taken
// off, however deep, so that a caller that retries on its own (the actors
// runtime) never retries through a second layer.
func TestSingleAttempt(t *testing.T) {
	f := &flaky{errs: []error{errServer, errServer, errServer}}
	wrapped := providers.WithRetry(providers.WithRetry(f, providers.RetryPolicy{Sleep: (&recorder{}).sleep}),
		providers.RetryPolicy{Sleep: (&recorder{}).sleep})
	single := providers.SingleAttempt(wrapped)
	if _, err := single.Chat(t.Context(), messages.Request{}); !errors.Is(err, errServer) {
		t.Fatalf("Chat err = %v, want the server error", err)
	}
	if f.calls != 1 {
		t.Errorf("calls = %d through SingleAttempt, want 1", f.calls)
	}
	if _, ok := wrapped.(providers.Retrier); !ok {
		t.Error("WithRetry's provider does not implement Retrier")
	}
	if got := providers.SingleAttempt(f); got != providers.Provider(f) {
		t.Errorf("SingleAttempt of a provider without retries = %v, want the provider itself", got)
	}
}
