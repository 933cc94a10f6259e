package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agcore/agcore/messages"
)

// TranscriptEntry is one message of a session's transcript, as it happened:
// user messages, assistant replies and tool results, with the turn and the
// time they were journaled.
type TranscriptEntry struct {
	// Seq is the journal sequence number of the entry.
	Seq uint64 `json:"seq"`
	// Turn is the 0-based turn index.
	Turn int `json:"turn"`
	// Time is when the entry was journaled.
	Time time.Time `json:"time"`
	messages.Message
	// Model is the model that wrote an assistant message.
	Model string `json:"model,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
}

// Transcript reads session's journal and returns its messages in order. It
// is the conversation as it happened: compactions, which only shorten what
// the model is sent, are not applied, and system prompts, which are layered
// afresh for every model call, are not journaled and so not included. A
// session without a journal gives ErrNotFound.
func Transcript(ctx context.Context, j Journal, session string) ([]TranscriptEntry, error) {
	tail, err := j.Tail(ctx, session)
	if err != nil {
		return nil, fmt.Errorf("memory: transcript %s: %w", session, err)
	}
	if tail == 0 {
		return nil, fmt.Errorf("memory: transcript %s: %w", session, ErrNotFound)
	}
	var out []TranscriptEntry
	for e, err := range j.Read(ctx, session, 1) {
		if err != nil {
			return nil, fmt.Errorf("memory: transcript: %w", err)
		}
		entry := TranscriptEntry{Seq: e.Envelope.Seq, Time: e.Envelope.At}
		switch ev := e.Event.(type) {
		case messages.UserMessage:
			entry.Turn, entry.Message = ev.Turn, ev.Message
		case messages.AssistantMessage:
			entry.Turn, entry.Message, entry.Model = ev.Turn, ev.Message, ev.Model
		case messages.ToolResult:
			entry.Turn, entry.IsError = ev.Turn, ev.IsError
			entry.Message = messages.ToolResultMessage(ev.CallID, ev.Content)
			entry.Name = ev.Name
		default:
			continue
		}
		out = append(out, entry)
	}
	return out, nil
}

// WriteJSONL writes entries as JSON Lines: one TranscriptEntry object per
// line, the message's fields (role, content, tool_calls, tool_call_id,
// name) beside seq, turn and time.
func WriteJSONL(w io.Writer, entries []TranscriptEntry) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("memory: write transcript: %w", err)
		}
	}
	return nil
}

// ShareGPT is a conversation in the ShareGPT format used for fine-tuning.
type ShareGPT struct {
	Conversations []ShareGPTTurn `json:"conversations"`
}

// ShareGPTTurn is one message of a ShareGPT conversation.
type ShareGPTTurn struct {
	// From is "system", "human", "gpt" or "tool".
	From string `json:"from"`
	// Value is the message's text.
	Value string `json:"value"`
}

// ToShareGPT converts entries to the ShareGPT format. User messages become
// "human", assistant messages "gpt", tool results "tool", and system
// messages "system". A tool call is rendered, after the assistant's text,
// as a Hermes-style block on lines of its own:
//
//	<tool_call>
//	{"name":"read_file","arguments":{"path":"go.mod"}}
//	</tool_call>
//
// (arguments that are not valid JSON are given as a string), and a tool
// result as
//
//	<tool_response>
//	{"name":"read_file","content":"module x\n"}
//	</tool_response>
func ToShareGPT(entries []TranscriptEntry) ShareGPT {
	out := ShareGPT{Conversations: make([]ShareGPTTurn, 0, len(entries))}
	for _, e := range entries {
		var turn ShareGPTTurn
		switch e.Role {
		case messages.RoleUser:
			turn = ShareGPTTurn{From: "human", Value: e.Text()}
		case messages.RoleSystem, messages.RoleDeveloper:
			turn = ShareGPTTurn{From: "system", Value: e.Text()}
		case messages.RoleAssistant:
			parts := []string{}
			if t := e.Text(); t != "" {
				parts = append(parts, t)
			}
			for _, c := range e.ToolCalls {
				parts = append(parts, "<tool_call>\n"+toolCallJSON(c)+"\n</tool_call>")
			}
			turn = ShareGPTTurn{From: "gpt", Value: strings.Join(parts, "\n")}
		case messages.RoleTool:
			b, _ := json.Marshal(struct {
				Name    string `json:"name"`
				Content string `json:"content"`
			}{e.Name, e.Text()}) // strings always marshal
			turn = ShareGPTTurn{From: "tool", Value: "<tool_response>\n" + string(b) + "\n</tool_response>"}
		default:
			continue
		}
		out.Conversations = append(out.Conversations, turn)
	}
	return out
}

// toolCallJSON renders a tool call as {"name":...,"arguments":...}.
func toolCallJSON(c messages.ToolCall) string {
	var args any = c.Arguments
	if json.Valid([]byte(c.Arguments)) {
		args = json.RawMessage(c.Arguments)
	}
	b, err := json.Marshal(struct {
		Name      string `json:"name"`
		Arguments any    `json:"arguments"`
	}{c.Name, args})
	if err != nil {
		return fmt.Sprintf(`{"name":%q,"arguments":%q}`, c.Name, c.Arguments)
	}
	return string(b)
}

// WriteShareGPT writes entries as one indented ShareGPT JSON object.
func WriteShareGPT(w io.Writer, entries []TranscriptEntry) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ToShareGPT(entries)); err != nil {
		return fmt.Errorf("memory: write transcript: %w", err)
	}
	return nil
}
