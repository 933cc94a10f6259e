package openai

import "sync"

// maxPooledBody is the largest encoding buffer kept for reuse; a larger one
// (a very long conversation) is left to the garbage collector.
const maxPooledBody = 1 << 20

// bodyPool keeps the buffers request bodies are encoded into, so that
// encoding a request does not grow a buffer of its own from nothing. The
// zero value is ready to use.
type bodyPool struct{ p sync.Pool }

// get returns an empty request body backed by a reused buffer when one is
// free.
func (bp *bodyPool) get() *requestBody {
	b, ok := bp.p.Get().(*requestBody)
	if !ok {
		b = &requestBody{pool: bp, buf: make([]byte, 0, 4<<10)}
	}
	b.buf = b.buf[:0]
	return b
}

// requestBody is the encoded body of one request, in a pooled buffer. The
// request sent is a copy of exactly its length (see api.post), so the
// buffer goes back to the pool as soon as the request is made: nothing the
// HTTP client does later (a retry on a new connection, a body read after
// Do returned) can see another request's bytes.
type requestBody struct {
	buf  []byte
	pool *bodyPool
}

// release gives the buffer back to the pool. b must not be used afterwards.
func (b *requestBody) release() {
	if cap(b.buf) > maxPooledBody {
		return
	}
	b.buf = b.buf[:0]
	b.pool.p.Put(b)
}
