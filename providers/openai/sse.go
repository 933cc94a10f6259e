package openai

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// maxLine caps one line of the event stream.
const maxLine = 8 << 20

// errLineTooLong is returned for a line longer than maxLine.
var errLineTooLong = fmt.Errorf("openai: stream line longer than %d bytes", maxLine)

// doneMarker is the payload that ends an OpenAI stream.
var doneMarker = []byte("[DONE]")

// sseReader reads the data payloads of a server-sent event stream, one per
// "data:" line, as OpenAI-compatible servers send them. Blank lines,
// comments (":") and the event, id and retry fields are skipped; "data:"
// may or may not be followed by a space; an empty data line is skipped;
// "\r\n" line ends are accepted. A line that starts with "{" is taken as a
// bare JSON payload, which some servers send for errors.
//
// Its read buffer comes from a pool and goes back with release.
type sseReader struct {
	r    *bufio.Reader
	pool *readerPool
	line []byte
}

// readBufferSize is the size of a stream's read buffer: lines up to this
// long are returned without a copy.
const readBufferSize = 32 << 10

// readerPool keeps the read buffers of finished streams for the next ones,
// so that a streamed reply does not allocate (and the collector does not
// sweep) a 32 KiB buffer of its own. The zero value is ready to use.
type readerPool struct{ p sync.Pool }

// get returns a buffered reader of r, reused when one is free.
func (rp *readerPool) get(r io.Reader) *bufio.Reader {
	if br, ok := rp.p.Get().(*bufio.Reader); ok {
		br.Reset(r)
		return br
	}
	return bufio.NewReaderSize(r, readBufferSize)
}

// put gives br back once nothing reads from it or holds a slice of its
// buffer. It drops the reference to the body br was reading.
func (rp *readerPool) put(br *bufio.Reader) {
	br.Reset(nil)
	rp.p.Put(br)
}

func newSSEReader(pool *readerPool, r io.Reader) *sseReader {
	return &sseReader{r: pool.get(r), pool: pool}
}

// release gives the read buffer back to its pool. The reader must not be
// used afterwards; payloads it returned are invalid.
func (d *sseReader) release() {
	if d.r != nil {
		d.pool.put(d.r)
		d.r, d.line = nil, nil
	}
}

// next returns the next payload. The slice is valid until the following
// call. At the end of the input it returns io.EOF, or io.ErrUnexpectedEOF
// when the input stops in the middle of a line that is not "data: [DONE]".
func (d *sseReader) next() ([]byte, error) {
	for {
		line, err := d.readLine()
		if err != nil && !(errors.Is(err, io.ErrUnexpectedEOF) && len(line) > 0) {
			return nil, err
		}
		payload, ok := payloadOf(line)
		if err != nil {
			// A partial last line: only a complete [DONE] is trusted.
			if ok && bytes.Equal(payload, doneMarker) {
				return payload, nil
			}
			return nil, io.ErrUnexpectedEOF
		}
		if ok {
			return payload, nil
		}
	}
}

// payloadOf returns the data payload of one line, if it carries one.
func payloadOf(line []byte) ([]byte, bool) {
	if len(line) == 0 || line[0] == ':' {
		return nil, false
	}
	if line[0] == '{' {
		return line, true
	}
	field, value, found := bytes.Cut(line, []byte(":"))
	if !found || string(field) != "data" {
		return nil, false
	}
	value = bytes.TrimPrefix(value, []byte(" "))
	if len(bytes.TrimSpace(value)) == 0 {
		return nil, false
	}
	return value, true
}

// readLine returns the next line without its line end. At the end of the
// input it returns io.EOF, or the partial last line with
// io.ErrUnexpectedEOF.
func (d *sseReader) readLine() ([]byte, error) {
	d.line = d.line[:0]
	for {
		frag, err := d.r.ReadSlice('\n')
		if len(d.line)+len(frag) > maxLine {
			return nil, errLineTooLong
		}
		switch {
		case err == nil:
			if len(d.line) == 0 {
				return trimEOL(frag), nil
			}
			d.line = append(d.line, frag...)
			return trimEOL(d.line), nil
		case errors.Is(err, bufio.ErrBufferFull):
			d.line = append(d.line, frag...)
		case errors.Is(err, io.EOF):
			d.line = append(d.line, frag...)
			if len(bytes.TrimSpace(d.line)) == 0 {
				return nil, io.EOF
			}
			return trimEOL(d.line), io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
