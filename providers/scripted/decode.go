package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agcore/agcore/messages"
)

// LoadFile reads a script from a .json, .yaml or .yml file and validates it.
func LoadFile(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("scripted: %w", err)
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".json":
		return ParseJSON(data)
	case ".yaml", ".yml":
		return ParseYAML(data)
	default:
		return Script{}, fmt.Errorf("scripted: %s: unknown script format %q (want .json, .yaml or .yml)", path, ext)
	}
}

// ParseYAML decodes and validates a script written in YAML. The document
// has the same shape as for ParseJSON.
func ParseYAML(data []byte) (Script, error) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Script{}, fmt.Errorf("scripted: yaml: %w", err)
	}
	doc, err := jsonCompatible(doc)
	if err != nil {
		return Script{}, fmt.Errorf("scripted: yaml: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return Script{}, fmt.Errorf("scripted: yaml: %w", err)
	}
	return ParseJSON(b)
}

// ParseJSON decodes and validates a script written in JSON:
//
//	{"stateless": false,
//	 "rules": [
//	   {"name": "greet", "match": {"contains": "hello"}, "reply": {"text": "Hi!"}},
//	   {"match": {"tool": "read_file"}, "once": true,
//	    "reply": {"tool_calls": [{"name": "write_file", "arguments": {"path": "out.md"}}]}},
//	   {"match": {"any": true}, "turns": [
//	     {"fail": {"kind": "rate_limit", "retry_after": "2s"}},
//	     {"text": "done", "latency": "150ms", "usage": {"prompt_tokens": 10, "completion_tokens": 2}}]}],
//	 "failures": [{"calls": [3], "fail": {"kind": "server"}}]}
//
// Match fields: any, role, exact, contains, regexp, tool. Reply fields:
// text, tool_calls (id, name, arguments as a JSON object or a string),
// finish_reason, usage, latency, chunk_delay (Go durations such as "1.5s"),
// fail (kind, retry_after, message, after_chunks). Unknown fields are
// errors. A *ScriptError names the rule and field of any problem.
func ParseJSON(data []byte) (Script, error) {
	var f fileScript
	if err := strictJSON(data, &f); err != nil {
		return Script{}, fmt.Errorf("scripted: %w", err)
	}
	s := Script{Stateless: f.Stateless}
	for i, raw := range f.Rules {
		var fr fileRule
		if err := strictJSON(raw, &fr); err != nil {
			return Script{}, &ScriptError{Rule: i, Field: fmt.Sprintf("rules[%d]", i), Err: err}
		}
		r, err := fr.rule(i)
		if err != nil {
			return Script{}, err
		}
		s.Rules = append(s.Rules, r)
	}
	for j, raw := range f.Failures {
		field := fmt.Sprintf("failures[%d]", j)
		var fi fileInjection
		if err := strictJSON(raw, &fi); err != nil {
			return Script{}, &ScriptError{Rule: -1, Field: field, Err: err}
		}
		fail, err := fi.Fail.failure()
		if err != nil {
			return Script{}, &ScriptError{Rule: -1, Field: field + ".fail" + err.field, Err: err.err}
		}
		s.Failures = append(s.Failures, Injection{Calls: fi.Calls, Failure: fail})
	}
	if err := s.Validate(); err != nil {
		return Script{}, err
	}
	return s, nil
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the top-level value")
	}
	return nil
}

type fileScript struct {
	Stateless bool              `json:"stateless"`
	Rules     []json.RawMessage `json:"rules"`
	Failures  []json.RawMessage `json:"failures"`
}

type fileRule struct {
	Name  string      `json:"name"`
	Match fileMatch   `json:"match"`
	Reply *fileReply  `json:"reply"`
	Turns []fileReply `json:"turns"`
	Once  bool        `json:"once"`
}

type fileMatch struct {
	Any      bool          `json:"any"`
	Role     messages.Role `json:"role"`
	Exact    string        `json:"exact"`
	Contains string        `json:"contains"`
	Regexp   string        `json:"regexp"`
	Tool     string        `json:"tool"`
}

type fileReply struct {
	Text         string                `json:"text"`
	ToolCalls    []fileToolCall        `json:"tool_calls"`
	FinishReason messages.FinishReason `json:"finish_reason"`
	Usage        *messages.Usage       `json:"usage"`
	Latency      string                `json:"latency"`
	ChunkDelay   string                `json:"chunk_delay"`
	Fail         *fileFailure          `json:"fail"`
}

type fileToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type fileFailure struct {
	Kind        FailureKind `json:"kind"`
	RetryAfter  string      `json:"retry_after"`
	Message     string      `json:"message"`
	AfterChunks int         `json:"after_chunks"`
}

type fileInjection struct {
	Calls []int       `json:"calls"`
	Fail  fileFailure `json:"fail"`
}

func (fr fileRule) rule(i int) (Rule, error) {
	r := Rule{Name: fr.Name, Once: fr.Once, Match: Match(fr.Match)}
	if fr.Reply != nil {
		rep, err := fr.Reply.reply()
		if err != nil {
			return Rule{}, &ScriptError{Rule: i, Field: fmt.Sprintf("rules[%d].reply%s", i, err.field), Err: err.err}
		}
		r.Reply = rep
	}
	for k, ft := range fr.Turns {
		rep, err := ft.reply()
		if err != nil {
			return Rule{}, &ScriptError{Rule: i, Field: fmt.Sprintf("rules[%d].turns[%d]%s", i, k, err.field), Err: err.err}
		}
		r.Turns = append(r.Turns, rep)
	}
	return r, nil
}

func (fr fileReply) reply() (Reply, *fieldErr) {
	r := Reply{Text: fr.Text, FinishReason: fr.FinishReason, Usage: fr.Usage}
	var err *fieldErr
	if r.Latency, err = duration(".latency", fr.Latency); err != nil {
		return Reply{}, err
	}
	if r.ChunkDelay, err = duration(".chunk_delay", fr.ChunkDelay); err != nil {
		return Reply{}, err
	}
	for k, c := range fr.ToolCalls {
		args, aerr := arguments(c.Arguments)
		if aerr != nil {
			return Reply{}, &fieldErr{fmt.Sprintf(".tool_calls[%d].arguments", k), aerr}
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
	}
	if fr.Fail != nil {
		f, ferr := fr.Fail.failure()
		if ferr != nil {
			return Reply{}, &fieldErr{".fail" + ferr.field, ferr.err}
		}
		r.Fail = &f
	}
	return r, nil
}

func (ff fileFailure) failure() (Failure, *fieldErr) {
	d, err := duration(".retry_after", ff.RetryAfter)
	if err != nil {
		return Failure{}, err
	}
	return Failure{Kind: ff.Kind, RetryAfter: d, Message: ff.Message, AfterChunks: ff.AfterChunks}, nil
}

func duration(field, s string) (time.Duration, *fieldErr) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, &fieldErr{field, err}
	}
	return d, nil
}

// arguments turns a tool call's arguments into JSON text: a JSON string is
// taken as the text itself, any other value is compacted.
func arguments(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	return b.String(), nil
}

// jsonCompatible converts a decoded YAML document into values that
// encoding/json accepts (maps with string keys).
func jsonCompatible(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			v[k] = c
		}
		return v, nil
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("mapping key %v is not a string", k)
			}
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			m[ks] = c
		}
		return m, nil
	case []any:
		for i, e := range v {
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			v[i] = c
		}
		return v, nil
	}
	return v, nil
}
