package actors

// This file holds StreamMode, whether model calls stream their replies.

import "fmt"

// StreamMode says whether a model call streams its reply (Provider.Stream,
// text deltas published as they arrive) or asks for the complete reply
// (Provider.Chat, its text published as one delta). Both publish the same
// events and journal the same reply.
type StreamMode int

// The stream modes.
const (
	// StreamDefault inherits: an agent's is Config.Stream, and the
	// runtime's streams.
	StreamDefault StreamMode = iota
	// StreamOn streams the replies.
	StreamOn
	// StreamOff asks for complete replies, for endpoints that cannot
	// stream (or cannot stream tool calls).
	StreamOff
)

// String returns "default", "on" or "off".
func (m StreamMode) String() string {
	switch m {
	case StreamDefault:
		return "default"
	case StreamOn:
		return "on"
	case StreamOff:
		return "off"
	}
	return fmt.Sprintf("StreamMode(%d)", int(m))
}

// streams reports whether the agent's model calls stream, under the
// runtime's mode.
func (a *agent) streams(runtime StreamMode) bool {
	if a.Stream != StreamDefault {
		return a.Stream != StreamOff
	}
	return runtime != StreamOff
}
