// Package scripted is a deterministic chat model for tests and offline
// demos. It implements providers.Provider by playing a Script: an ordered
// list of rules, each matching the last user or tool message of a request
// and answering with text, tool calls, or an injected failure.
//
//	p, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
//		{Match: scripted.Match{Contains: "weather"}, Reply: scripted.Reply{
//			ToolCalls: []scripted.ToolCall{{Name: "get_weather", Arguments: `{"city":"Oslo"}`}},
//		}},
//		{Match: scripted.Match{Tool: "get_weather"}, Reply: scripted.Reply{Text: "It is sunny in Oslo."}},
//	}}, scripted.Options{})
//	if err != nil {
//		return err
//	}
//	resp, err := p.Chat(ctx, messages.Request{Messages: []messages.Message{messages.UserText("weather?")}})
//
// # Matching
//
// A request is matched on its last user or tool message. A Match can test
// the text (Exact, Contains, Regexp), the role, and for a tool message the
// name of the tool whose call it answers (Tool); Any matches everything.
// Rules are tried in order and the first that matches answers. When none
// does, the call fails with a *providers.Error of kind KindBadRequest
// wrapping ErrNoMatch, which quotes the unmatched message.
//
// # Replies
//
// A reply's tool calls get deterministic ids ("call_<a>_<i>") unless the
// script gives them, the finish reason is derived (tool_calls when there
// are calls, stop otherwise) unless given, and the usage is estimated at
// four characters per token unless given. Stream cuts the same reply into
// small chunks (text pieces, tool-call arguments in several fragments, a
// finish chunk and a usage chunk), so that stream consumers are exercised
// as a real endpoint would.
//
// # Several turns and state
//
// A rule repeats by default; Once makes it answer a single time, and Turns
// lists replies played one after the other. That state is shared by all
// callers. A Stateless script refuses Once and indexes Turns by the step of
// the conversation (assistant messages since the last user message)
// instead, so that its replies depend on the request alone: the mode to use
// when many conversations share one provider or one mock server, as the
// Demo script does.
//
// # Failures and latency
//
// A reply can be a Failure (rate limit with Retry-After, server error,
// timeout, context length, ...), returned as a *providers.Error; as one of
// Turns it fails given calls of a rule, and Script.Failures fails given
// calls of the provider. Latency and ChunkDelay simulate a slow model
// through Options.Sleep, which tests replace so that they do not wait.
//
// # Files
//
// ParseJSON, ParseYAML and LoadFile read scripts from data; a
// *ScriptError names the rule and the field of any problem.
package scripted
