package actors

// This file holds redactEvent, which masks credentials in the events a
// session publishes.

import (
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/redact"
)

// redactEvent masks the text of an event before it is published: error
// reasons and messages fully, and model and tool text (deltas, arguments,
// results) by Content, so that a file the agent quotes keeps its
// name=value lines. Events without text are returned as they are.
func redactEvent(r *redact.Redactor, ev messages.Event) messages.Event {
	switch e := ev.(type) {
	case messages.TextDelta:
		e.Text = r.Content(e.Text)
		return e
	case messages.ToolStarted:
		e.Arguments = r.Content(e.Arguments)
		return e
	case messages.ToolFinished:
		e.Content = r.Content(e.Content)
		return e
	case messages.TurnEnded:
		e.Text, e.Reason = r.Content(e.Text), r.String(e.Reason)
		if e.Output != nil {
			e.Output = r.ContentJSON(e.Output)
		}
		if f := e.OutputFailure; f != nil {
			e.OutputFailure = &messages.OutputFailure{Raw: r.Content(f.Raw), Problem: r.Content(f.Problem)}
		}
		return e
	case messages.ErrorEvent:
		e.Message = r.String(e.Message)
		return e
	case messages.ApprovalPending:
		e.Reason = r.String(e.Reason)
		return e
	case messages.ToolProgress:
		e.Message = r.Content(e.Message)
		return e
	case messages.ElicitationPending:
		e.Message, e.URL = r.String(e.Message), r.String(e.URL)
		return e
	}
	return ev
}
