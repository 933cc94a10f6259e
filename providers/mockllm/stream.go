package mockllm

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// nullUsage is the usage of every chunk but the last when the client asked
// for usage.
var nullUsage = json.RawMessage("null")

// sseWriter writes server-sent events, flushing each.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
}

// event writes "data: <json of v>" and flushes.
func (s *sseWriter) event(v any) error {
	s.buf.Reset()
	s.buf.WriteString("data: ")
	enc := json.NewEncoder(&s.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode ends the line
		return err
	}
	s.buf.WriteByte('\n')
	return s.send()
}

func (s *sseWriter) done() error {
	s.buf.Reset()
	s.buf.WriteString("data: [DONE]\n\n")
	return s.send()
}

func (s *sseWriter) send() error {
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return err
	}
	return s.rc.Flush()
}

// stream answers a streaming chat completion as OpenAI does: one
// chat.completion.chunk per provider chunk (the first with the assistant
// role, tool calls as index/id/type/name/arguments fragments, the finish
// reason on its own chunk), then, when includeUsage, a chunk with no
// choices and the usage, then "data: [DONE]". A provider error before the
// first chunk is an ordinary error response; after it, an error event ends
// the stream without [DONE]. It returns the status sent.
func (h *handler) stream(w http.ResponseWriter, r *http.Request, req messages.Request, includeUsage bool) int {
	st, err := h.cfg.Provider.Stream(r.Context(), req)
	if err != nil {
		if r.Context().Err() != nil {
			return 499
		}
		e := errorFor(err)
		e.write(w)
		return e.status
	}
	defer st.Close()

	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	sw := &sseWriter{w: w, rc: http.NewResponseController(w)}

	base := chunkResponse{Object: "chat.completion.chunk", Created: h.cfg.Now().Unix(), Model: req.Model}
	if includeUsage {
		base.Usage = nullUsage
	}
	var (
		sentRole, finished bool
		usage              *messages.Usage
	)
	emit := func(d delta, finish *string) error {
		if base.ID == "" {
			base.ID = h.idOf("")
		}
		if !sentRole {
			d.Role, sentRole = messages.RoleAssistant, true
		}
		ev := base
		ev.Choices = []streamChoice{{Index: 0, Delta: d, FinishReason: finish}}
		return sw.event(ev)
	}
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if r.Context().Err() == nil {
				e := errorFor(err)
				_ = sw.event(struct {
					Error apiError `json:"error"`
				}{e.body})
			}
			return http.StatusOK
		}
		if c.ID != "" && base.ID == "" {
			base.ID = c.ID
		}
		if c.Model != "" {
			base.Model = c.Model
		}
		if c.Usage != nil {
			u := *c.Usage
			usage = &u
		}
		d, finish, ok := deltaOf(c)
		if !ok {
			continue
		}
		finished = finished || finish != nil
		if err := emit(d, finish); err != nil {
			return http.StatusOK
		}
	}
	resp := st.Response()
	if !finished {
		finish := string(cmp.Or(resp.FinishReason, messages.FinishStop))
		if err := emit(delta{}, &finish); err != nil {
			return http.StatusOK
		}
	}
	if includeUsage {
		if usage == nil {
			usage = &resp.Usage
		}
		ev := base
		ev.Choices = []streamChoice{}
		ev.Usage, _ = json.Marshal(usageOf(*usage))
		if err := sw.event(ev); err != nil {
			return http.StatusOK
		}
	}
	_ = sw.done()
	return http.StatusOK
}

// deltaOf renders the content of c; ok is false when c carries nothing
// but usage or identification.
func deltaOf(c providers.Chunk) (d delta, finish *string, ok bool) {
	if c.Text != "" {
		text := c.Text
		d.Content, ok = &text, true
	}
	for _, tc := range c.ToolCalls {
		i := tc.Index
		w := wireToolCall{Index: &i, ID: tc.ID, Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments}}
		if tc.ID != "" || tc.Name != "" {
			w.Type = "function"
		}
		d.ToolCalls, ok = append(d.ToolCalls, w), true
	}
	if c.FinishReason != "" {
		f := string(c.FinishReason)
		finish, ok = &f, true
	}
	return d, finish, ok
}
