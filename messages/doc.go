// Package messages is the protocol agcore speaks: the provider-neutral chat
// model (Message, Part, ToolCall, Usage, FinishReason, Request, Response),
// the stream events a session publishes, and the versioned journal envelope
// the memory package stores.
//
// Everything here is plain data with a stable JSON form. The package imports
// nothing internal, so every other package can depend on it.
//
// # Chat model
//
// A Message has a Role and Content. Content is a sequence of parts (text,
// image URL, input audio, file); it marshals as a bare JSON string when it
// holds exactly one text part, the way OpenAI-compatible servers expect, and
// decodes from a string, an array of parts, or null. Assistant messages carry
// ToolCalls; tool messages answer one call through ToolCallID.
//
// # Events
//
// Event is a sealed interface over the structs a running session publishes
// (TurnStarted, TextDelta, ToolCallStarted, ...). MarshalEvent and
// UnmarshalEvent give them a tagged JSON form for SSE and logs.
//
// # Journal
//
// JournalEvent is a sealed interface over the facts a session journals
// (UserMessage, AssistantMessage, ToolCallStarted, ToolResult, ...).
// NewEnvelope wraps one in the versioned Envelope {v, seq, type, at, data}.
// Envelope.Encode gives its stored form, which ends with a CRC-32C of the
// bytes before it; DecodeEnvelope verifies that checksum before it decodes
// anything, and returns the event, or an error naming the sequence number
// when the entry was altered (ErrCorrupt, ErrChecksum), the version or type
// is unknown, or the data is corrupt. Version 1 entries, written before
// checksums, still decode.
package messages
