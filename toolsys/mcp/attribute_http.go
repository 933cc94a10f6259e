package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// maxMarkedEvent bounds one server-sent event the attribution reads whole.
const maxMarkedEvent = 16 << 20

// errEventTooLarge ends a response stream whose event passes
// maxMarkedEvent.
var errEventTooLarge = errors.New("mcp: a server-sent event is larger than 16 MiB")

// attributeTransport ties the requests a Streamable HTTP server sends
// during a tool call to that call. The server sends them on the SSE
// response stream of the POST that carries the tools/call (and on the
// streams that resume it, made with the same context); every server
// request on such a stream gets the call's token in its _meta, under
// callerMetaKey, and every other server request has that key removed, so
// that a server cannot choose the call its request is attributed to.
// Client.attribute reads the mark.
type attributeTransport struct {
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *attributeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return resp, nil
	}
	token, _ := req.Context().Value(callToken{}).(string)
	resp.Body = &markingBody{src: bufio.NewReader(resp.Body), body: resp.Body, token: token}
	return resp, nil
}

// markingBody rewrites the events of an SSE stream as they are read: the
// data of each is given to markEvent.
type markingBody struct {
	src   *bufio.Reader
	body  io.Closer
	token string

	out   []byte   // rewritten bytes not yet read
	event [][]byte // the lines of the event being read, with their ends
	size  int      // bytes in event
	err   error    // the end of src, once reached
}

// Read implements io.Reader.
func (b *markingBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.fill()
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// Close implements io.Closer.
func (b *markingBody) Close() error { return b.body.Close() }

// fill reads one line; a blank line ends an event, which is written out.
func (b *markingBody) fill() {
	line, err := b.src.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		err = nil
	}
	if len(line) > 0 {
		if b.size += len(line); b.size > maxMarkedEvent {
			b.err = errEventTooLarge
			return
		}
		if n := len(b.event); n > 0 && !bytes.HasSuffix(b.event[n-1], []byte("\n")) {
			b.event[n-1] = append(b.event[n-1], line...) // a long line read in parts
		} else {
			b.event = append(b.event, append([]byte(nil), line...))
		}
		if n := len(b.event); bytes.HasSuffix(line, []byte("\n")) && len(bytes.TrimRight(b.event[n-1], "\r\n")) == 0 {
			b.event = b.event[:n-1]
			b.flush()
			b.out = append(b.out, line...)
		}
	}
	if err != nil {
		b.flush()
		b.err = err
	}
}

// flush writes out the event read so far: its lines as they came, except
// that its data lines are replaced by one holding the marked message.
func (b *markingBody) flush() {
	defer func() { b.event, b.size = b.event[:0], 0 }()
	var data [][]byte
	for _, l := range b.event {
		if v, ok := sseField(l, "data"); ok {
			data = append(data, v)
		}
	}
	if data == nil {
		for _, l := range b.event {
			b.out = append(b.out, l...)
		}
		return
	}
	marked, ok := markEvent(bytes.Join(data, []byte("\n")), b.token)
	for _, l := range b.event {
		if _, isData := sseField(l, "data"); !isData {
			b.out = append(b.out, l...)
		}
	}
	if ok {
		b.out = append(b.out, "data: "...)
		b.out = append(b.out, marked...)
		b.out = append(b.out, '\n')
	}
}

// sseField returns the value of line when it is the field name ("data:
// x" gives "x").
func sseField(line []byte, name string) ([]byte, bool) {
	line = bytes.TrimRight(line, "\r\n")
	rest, ok := bytes.CutPrefix(line, []byte(name))
	if !ok {
		return nil, false
	}
	if len(rest) == 0 {
		return rest, true
	}
	if rest[0] != ':' {
		return nil, false
	}
	return bytes.TrimPrefix(rest[1:], []byte(" ")), true
}

// markEvent returns the JSON-RPC message data with callerMetaKey set to
// token in the _meta of its params (removed when token is empty). A
// message with params is always written anew from what was decoded, so
// that the SDK reads exactly what was checked; one that is not a JSON
// object is refused (ok false: the event is dropped).
func markEvent(data []byte, token string) (out []byte, ok bool) {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(data, &msg); err != nil || msg == nil {
		return nil, false
	}
	raw, has := msg["params"]
	if !has || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if token == "" {
			return data, true
		}
		raw = json.RawMessage("{}")
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(raw, &params); err != nil || params == nil {
		return nil, false
	}
	var meta map[string]json.RawMessage
	if m, has := params["_meta"]; has && !bytes.Equal(bytes.TrimSpace(m), []byte("null")) {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, false
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	delete(meta, callerMetaKey)
	if token != "" {
		meta[callerMetaKey], _ = json.Marshal(token)
	}
	if len(meta) > 0 {
		params["_meta"] = mustJSON(meta)
	} else {
		delete(params, "_meta")
	}
	msg["params"] = mustJSON(params)
	return mustJSON(msg), true
}

// mustJSON encodes a map of raw messages decoded from valid JSON, which
// cannot fail.
func mustJSON(v map[string]json.RawMessage) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("mcp: re-encoding decoded JSON: %v", err))
	}
	return b
}
