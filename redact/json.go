package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSON returns the JSON text p (one value, or several separated by
// whitespace, as in JSON Lines) with credentials masked: the value of every
// object member whose name is a [SecretKey] becomes "[redacted]", whatever
// its type, and every other string passes through [Redactor.String]. Member
// order and numbers are kept. Text that is not JSON is masked with
// [Redactor.String] as plain text. p itself is returned when nothing is
// masked.
func (r *Redactor) JSON(p []byte) []byte {
	if !r.knownSet().holds(p) && !holds(allMatcher, p) && !holds(keyMatcher, p) {
		return p
	}
	return jsonMode{str: r.String, members: true}.rewrite(p, r.Bytes)
}

// ContentJSON is JSON for content a model works with, such as journal and
// stream events: every string passes through [Redactor.Content], and
// members are not masked for their name, so that tool arguments and
// results keep their shape. Text that is not JSON is masked with
// [Redactor.Content].
func (r *Redactor) ContentJSON(p []byte) []byte {
	if !r.knownSet().holds(p) && !holds(contentMatcher, p) {
		return p
	}
	return jsonMode{str: r.Content}.rewrite(p, func(b []byte) []byte { return []byte(r.Content(string(b))) })
}

// jsonMode says how a JSON text is masked: str masks each string, and
// members, when set, masks the whole value of a member whose name is a
// SecretKey.
type jsonMode struct {
	str     func(string) string
	members bool
}

// rewrite returns p with its strings masked, or text(p) when p is not JSON;
// p itself when nothing changed.
func (m jsonMode) rewrite(p []byte, text func([]byte) []byte) []byte {
	out, ok := m.rewriteJSON(p)
	if !ok {
		out = text(p)
	}
	if bytes.Equal(out, p) {
		return p
	}
	return out
}

// rewriteJSON re-encodes the JSON values of p with credentials masked, and
// reports false when p is not JSON.
func (m jsonMode) rewriteJSON(p []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	var buf bytes.Buffer
	buf.Grow(len(p))
	for dec.More() {
		if err := m.rewriteValue(dec, &buf); err != nil {
			return nil, false
		}
		buf.WriteByte('\n')
	}
	if len(bytes.TrimSpace(p[dec.InputOffset():])) > 0 {
		return nil, false
	}
	if !bytes.HasSuffix(p, []byte("\n")) {
		buf.Truncate(max(buf.Len()-1, 0))
	}
	return buf.Bytes(), true
}

// rewriteValue copies the next JSON value from dec to buf, masking
// credentials.
func (m jsonMode) rewriteValue(dec *json.Decoder, buf *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			buf.WriteByte('{')
			for first := true; dec.More(); first = false {
				ktok, err := dec.Token()
				if err != nil {
					return err
				}
				key, ok := ktok.(string)
				if !ok {
					return fmt.Errorf("object key is %T", ktok)
				}
				if !first {
					buf.WriteByte(',')
				}
				writeString(buf, m.str(key))
				buf.WriteByte(':')
				if m.members && SecretKey(key) {
					var skipped json.RawMessage
					if err := dec.Decode(&skipped); err != nil {
						return err
					}
					writeString(buf, Mask)
					continue
				}
				if err := m.rewriteValue(dec, buf); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			buf.WriteByte('}')
		case '[':
			buf.WriteByte('[')
			for first := true; dec.More(); first = false {
				if !first {
					buf.WriteByte(',')
				}
				if err := m.rewriteValue(dec, buf); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			buf.WriteByte(']')
		default:
			return fmt.Errorf("unexpected %v", t)
		}
	case string:
		writeString(buf, m.str(t))
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		fmt.Fprint(buf, t)
	case nil:
		buf.WriteString("null")
	}
	return nil
}

// writeString writes s as a JSON string without HTML escaping.
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	buf.Truncate(buf.Len() - 1)
}
