package httpapi

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/agcore/agcore/messages"
)

// streamKind says which event stream a response is.
type streamKind int

const (
	noStream streamKind = iota
	// turnStream is the stream of one turn (POST .../turns).
	turnStream
	// watchStream is the stream of every event of a session (GET .../events).
	watchStream
)

// The descriptions of the event streams.
const (
	streamFraming = "Each event is one Server-Sent Event: `id` counts the frames of this response from 1, " +
		"`event` is the event's type and `data` is one line of JSON, `{\"type\": <event>, \"data\": {...}}` " +
		"(schema SessionEvent; the media type's x-events maps each event type to the schema of its data). " +
		"Comment lines (`: keep-alive`) are sent at the heartbeat interval. A stream that ends early sends a " +
		"last `stream_error` frame whose data is an ErrorBody. The runtime buffers each stream: text deltas " +
		"and tool progress reports that a slow client cannot take are dropped (turn_ended carries the full text), and a client too slow " +
		"for other events gets stream_error slow_subscriber while the session goes on. The server keeps no " +
		"events for replay and does not read Last-Event-ID."
	turnStreamDescription = "The events of the turn, as they happen: turn_started first, then text_delta, " +
		"tool_started, tool_progress (a running call's progress report, between its tool_started and " +
		"tool_finished), tool_finished, usage, approval_pending, compacted, error, subagent_started, " +
		"subagent_ended and agent_changed, and turn_ended last, after which the response ends. " + streamFraming +
		" To follow a turn again after a disconnection, resubmit it with the same turn_id: the request " +
		"follows the turn in progress, or answers its turn_ended at once when it has ended."
	watchStreamDescription = "Every event the session publishes from now on, of every turn. turn_ended does " +
		"not end it: it ends when the client leaves, or with a stream_error frame when the session stops " +
		"(session_stopped), is deleted (session_not_found), the client is too slow (slow_subscriber) or the " +
		"server shuts down (shutting_down). " + streamFraming
)

// streamEvents returns one event of each type the runtime publishes, in
// the order a turn's stream shows them.
func streamEvents() []messages.Event {
	return []messages.Event{
		messages.TurnStarted{}, messages.TextDelta{}, messages.ToolStarted{}, messages.ToolProgress{}, messages.ToolFinished{},
		messages.UsageReported{}, messages.ApprovalPending{}, messages.ElicitationPending{}, messages.ElicitationAnswered{},
		messages.ContextCompacted{}, messages.ErrorEvent{},
		messages.SubAgentStarted{}, messages.SubAgentEnded{}, messages.AgentChanged{}, messages.TurnEnded{},
	}
}

// frameSchema names the schema of the data of an SSE frame of ev's type.
func frameSchema(ev messages.Event) string { return reflect.TypeOf(ev).Name() + "Frame" }

// addEventSchemas adds the schema of each event, of the data of the
// frame that carries it, and SessionEvent, their union.
func addEventSchemas(ss *schemaSet) error {
	var variants []any
	mapping := map[string]any{}
	for _, ev := range streamEvents() {
		data, err := ss.responseRef(ev)
		if err != nil {
			return err
		}
		name := frameSchema(ev)
		err = ss.putRaw(name, rawSchema{
			"type":                 "object",
			"description":          fmt.Sprintf("The data of a Server-Sent Event of type %s.", ev.EventType()),
			"required":             []any{"type", "data"},
			"additionalProperties": false,
			"properties": rawSchema{
				"type": rawSchema{"const": ev.EventType()},
				"data": data,
			},
		})
		if err != nil {
			return err
		}
		variants = append(variants, ref(name))
		mapping[ev.EventType()] = schemaRefPrefix + name
	}
	return ss.putRaw(schemaEvent, rawSchema{
		"description":   "An event of a session, as the data of a Server-Sent Event: its type, and the event.",
		"oneOf":         variants,
		"discriminator": rawSchema{"propertyName": "type", "mapping": mapping},
	})
}

// streamMedia describes a text/event-stream body.
func streamMedia(ss *schemaSet, kind streamKind) (openAPIMedia, error) {
	desc := turnStreamDescription
	if kind == watchStream {
		desc = watchStreamDescription
	}
	events := map[string]any{StreamErrorEvent: ref(schemaErrorBody)}
	for _, ev := range streamEvents() {
		events[ev.EventType()] = ref(frameSchema(ev))
	}
	example, err := streamExample()
	if err != nil {
		return openAPIMedia{}, err
	}
	return openAPIMedia{
		Schema:  rawSchema{"type": "string", "description": desc},
		Example: example,
		Events:  events,
	}, nil
}

// streamExample returns the frames of a short turn, as the server writes
// them.
func streamExample() (string, error) {
	meta := messages.EventMeta{Session: "s1", Turn: 0}
	usage := messages.Usage{PromptTokens: 42, CompletionTokens: 7, TotalTokens: 49}
	events := []messages.Event{
		messages.TurnStarted{EventMeta: meta, TurnID: "t-1", Agent: "default"},
		messages.TextDelta{EventMeta: meta, Text: "The project is a greeter."},
		messages.UsageReported{EventMeta: meta, Model: "gpt-4o-mini", Usage: usage, SessionUsage: usage},
		messages.TurnEnded{EventMeta: meta, TurnID: "t-1", Outcome: messages.OutcomeCompleted,
			FinishReason: messages.FinishStop, Text: "The project is a greeter.", Usage: usage, RoundTrips: 1},
	}
	var b strings.Builder
	for i, ev := range events {
		data, err := messages.MarshalEvent(ev)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "id: %d\nevent: %s\ndata: %s\n\n", i+1, ev.EventType(), data)
		if i == 1 {
			b.WriteString(": keep-alive\n\n")
		}
	}
	return b.String(), nil
}
