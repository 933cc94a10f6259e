package wasm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// Output is what one run of a tool left behind, as the host saw it.
type output struct {
	// stdout is what the tool wrote to standard output, up to the cap.
	stdout []byte
	// stdoutTotal is how many bytes it wrote (or tried to) in all.
	stdoutTotal int64
	// stderr is the head of what it wrote to standard error.
	stderr []byte
	// stderrTotal is how many bytes it wrote there in all.
	stderrTotal int64
}

// truncated reports whether stdout was cut at the cap.
func (o *output) truncated() bool { return o.stdoutTotal > int64(len(o.stdout)) }

// parseOutput maps a tool's standard output to a result. Output that is
// one JSON object with a "content" key and no keys but "content", "error"
// and "metadata" ("error" a boolean, "metadata" an object or null) is the
// structured form: its content (a string as is, another JSON value as
// compact JSON, null as empty), its error flag and its metadata make the
// result. Anything else is plain text: the whole output (invalid UTF-8
// replaced, trailing newlines dropped) is the content.
func parseOutput(stdout []byte) toolsys.Result {
	if res, ok := structured(stdout); ok {
		return res
	}
	return toolsys.Result{Content: plainText(stdout)}
}

// structured decodes the structured form; ok is false when stdout is not
// in it.
func structured(stdout []byte) (toolsys.Result, bool) {
	trimmed := bytes.TrimSpace(stdout)
	if len(trimmed) < 2 || trimmed[0] != '{' {
		return toolsys.Result{}, false
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return toolsys.Result{}, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return toolsys.Result{}, false
	}
	content, ok := obj["content"]
	if !ok {
		return toolsys.Result{}, false
	}
	for k := range obj {
		if k != "content" && k != "error" && k != "metadata" {
			return toolsys.Result{}, false
		}
	}
	var res toolsys.Result
	if raw, ok := obj["error"]; ok {
		if err := json.Unmarshal(raw, &res.IsError); err != nil {
			return toolsys.Result{}, false
		}
	}
	if raw, ok := obj["metadata"]; ok && !isNull(raw) {
		md, err := decodeObject(raw)
		if err != nil {
			return toolsys.Result{}, false
		}
		res.Metadata = md
	}
	text, ok := contentText(content)
	if !ok {
		return toolsys.Result{}, false
	}
	res.Content = text
	return res, true
}

// contentText renders the "content" value.
func contentText(raw json.RawMessage) (string, bool) {
	if isNull(raw) {
		return "", true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", false
	}
	return buf.String(), true
}

// decodeObject decodes a JSON object with exact numbers.
func decodeObject(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var md map[string]any
	if err := dec.Decode(&md); err != nil {
		return nil, err
	}
	if md == nil {
		return nil, errors.New("not an object")
	}
	return md, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// plainText is stdout as text for the model.
func plainText(b []byte) string {
	return strings.TrimRight(strings.ToValidUTF8(string(b), "\uFFFD"), "\r\n")
}
