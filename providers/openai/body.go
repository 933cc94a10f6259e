package openai

import (
	"io"
	"sync"
	"sync/atomic"
)

// maxPooledBody is the largest request buffer kept for reuse; a larger one
// (a very long conversation) is left to the garbage collector.
const maxPooledBody = 1 << 20

// bodyPool keeps the buffers request bodies are encoded into, so that a
// request does not allocate (and the collector does not sweep) a buffer of
// its own. The zero value is ready to use.
type bodyPool struct{ p sync.Pool }

// get returns an empty request body backed by a reused buffer when one is
// free. It holds one reference, the caller's; see requestBody.release.
func (bp *bodyPool) get() *requestBody {
	b, ok := bp.p.Get().(*requestBody)
	if !ok {
		b = &requestBody{pool: bp, buf: make([]byte, 0, 4<<10)}
	}
	b.buf = b.buf[:0]
	b.refs.Store(1)
	return b
}

// requestBody is the encoded body of one request. The HTTP client reads it
// through readers (open, getBody), possibly on its own goroutines and after
// Do has returned; the buffer goes back to the pool only when the caller
// has released it and every reader has been closed, so that no reader ever
// sees the buffer of another request.
type requestBody struct {
	buf  []byte
	pool *bodyPool
	refs atomic.Int32
}

// open returns a reader of the body, counted until it is closed.
func (b *requestBody) open() io.ReadCloser {
	b.refs.Add(1)
	return &bodyReader{b: b}
}

// getBody is the request's GetBody: net/http calls it to send the body
// again on a new connection.
func (b *requestBody) getBody() (io.ReadCloser, error) { return b.open(), nil }

// release drops one reference, and gives the buffer back to the pool when
// it was the last.
func (b *requestBody) release() {
	if b.refs.Add(-1) != 0 {
		return
	}
	if cap(b.buf) > maxPooledBody {
		return
	}
	b.buf = b.buf[:0]
	b.pool.p.Put(b)
}

// bodyReader reads a requestBody. Read and Close exclude each other, so
// that once Close returns no Read touches the buffer: net/http may close
// a request's body on one goroutine while another writes it out.
type bodyReader struct {
	mu     sync.Mutex
	b      *requestBody
	off    int
	closed bool
}

// Read implements io.Reader; after Close it reports io.ErrClosedPipe.
func (r *bodyReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, io.ErrClosedPipe
	}
	if r.off >= len(r.b.buf) {
		return 0, io.EOF
	}
	n := copy(p, r.b.buf[r.off:])
	r.off += n
	return n, nil
}

// Close implements io.Closer; only the first call releases the body.
func (r *bodyReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		r.b.release()
	}
	return nil
}
