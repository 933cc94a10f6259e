package scripted

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/agcore/agcore/messages"
)

// input is the message a request is matched on.
type input struct {
	role messages.Role
	text string
	// tool is the name of the tool whose call a tool message answers, or
	// "" when the call is not found in the request.
	tool string
	// assistants counts the assistant messages of the request; step counts
	// those after the last user message.
	assistants, step int
}

// inputOf finds the last user or tool message of msgs.
func inputOf(msgs []messages.Message) (input, bool) {
	var in input
	last, lastUser := -1, -1
	for i, m := range msgs {
		switch m.Role {
		case messages.RoleAssistant:
			in.assistants++
		case messages.RoleUser:
			last, lastUser = i, i
		case messages.RoleTool:
			last = i
		}
	}
	if last < 0 {
		return in, false
	}
	for _, m := range msgs[lastUser+1:] {
		if m.Role == messages.RoleAssistant {
			in.step++
		}
	}
	m := msgs[last]
	in.role, in.text = m.Role, m.Text()
	if m.Role == messages.RoleTool {
		in.tool = toolNameOf(msgs[:last], m.ToolCallID)
	}
	return in, true
}

// toolNameOf returns the name of the call with id in the latest assistant
// message of msgs that made it.
func toolNameOf(msgs []messages.Message, id string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID == id {
				return c.Name
			}
		}
	}
	return ""
}

// matches reports whether m (with its compiled regexp re) holds for in.
func (m Match) matches(re *regexp.Regexp, in input) bool {
	if m.Any {
		return true
	}
	switch {
	case m.Role != "" && m.Role != in.role,
		m.Tool != "" && (in.role != messages.RoleTool || m.Tool != in.tool),
		m.Exact != "" && m.Exact != in.text,
		m.Contains != "" && !strings.Contains(in.text, m.Contains),
		re != nil && !re.MatchString(in.text):
		return false
	}
	return true
}

// noMatch describes the input no rule answered, quoting at most 120
// characters of its text.
func noMatch(in input) error {
	text := in.text
	if r := []rune(text); len(r) > 120 {
		text = string(r[:120]) + "..."
	}
	if in.role == messages.RoleTool {
		tool := in.tool
		if tool == "" {
			tool = "an unknown call"
		}
		return fmt.Errorf("%w the last tool message (answering %s) %q", ErrNoMatch, tool, text)
	}
	return fmt.Errorf("%w the last user message %q", ErrNoMatch, text)
}
