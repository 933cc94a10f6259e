package messages

import "fmt"

// ValidationError says which message of a sequence is wrong and why.
type ValidationError struct {
	// Index is the position of the offending message; -1 for the sequence as a whole.
	Index  int
	Reason string
}

// Error implements error.
func (e *ValidationError) Error() string {
	if e.Index < 0 {
		return "messages: " + e.Reason
	}
	return fmt.Sprintf("messages[%d]: %s", e.Index, e.Reason)
}

// Validate checks a message sequence before it is sent to a provider: it is
// not empty, every role is known, every tool message answers a call of the
// nearest preceding assistant message, each call is answered at most once,
// and every call of an assistant message is answered before the next
// non-tool message. It returns a *ValidationError naming the first problem.
func Validate(msgs []Message) error {
	if len(msgs) == 0 {
		return &ValidationError{Index: -1, Reason: "the sequence is empty"}
	}
	var (
		open     map[string]bool // calls of the last assistant message not answered yet
		answered map[string]bool
		openAt   = -1
	)
	closeOpen := func(at int) error {
		for id, pending := range open {
			if pending {
				return &ValidationError{Index: openAt, Reason: fmt.Sprintf("tool call %q has no tool result before message %d", id, at)}
			}
		}
		return nil
	}
	for i, m := range msgs {
		if !m.Role.Valid() {
			return &ValidationError{Index: i, Reason: fmt.Sprintf("unknown role %q", m.Role)}
		}
		if m.Role != RoleTool {
			if err := closeOpen(i); err != nil {
				return err
			}
			open, answered, openAt = nil, nil, -1
		}
		switch m.Role {
		case RoleAssistant:
			if len(m.ToolCalls) > 0 {
				open, answered, openAt = make(map[string]bool, len(m.ToolCalls)), map[string]bool{}, i
				for _, c := range m.ToolCalls {
					if c.ID == "" {
						return &ValidationError{Index: i, Reason: fmt.Sprintf("tool call %q has no id", c.Name)}
					}
					if c.Name == "" {
						return &ValidationError{Index: i, Reason: fmt.Sprintf("tool call %q has no name", c.ID)}
					}
					if _, dup := open[c.ID]; dup {
						return &ValidationError{Index: i, Reason: fmt.Sprintf("tool call id %q appears twice", c.ID)}
					}
					open[c.ID] = true
				}
			}
		case RoleTool:
			if m.ToolCallID == "" {
				return &ValidationError{Index: i, Reason: "tool message has no tool_call_id"}
			}
			if answered[m.ToolCallID] {
				return &ValidationError{Index: i, Reason: fmt.Sprintf("tool call %q is answered twice", m.ToolCallID)}
			}
			if !open[m.ToolCallID] {
				return &ValidationError{Index: i, Reason: fmt.Sprintf("tool message answers %q, which the preceding assistant message did not call", m.ToolCallID)}
			}
			open[m.ToolCallID] = false
			answered[m.ToolCallID] = true
		}
	}
	return closeOpen(len(msgs))
}
