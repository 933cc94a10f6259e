package chaos

// FaultKind names one kind of injected fault.
type FaultKind string

// The kinds of faults the wrappers inject.
const (
	// FaultRateLimited is a model call refused with HTTP 429.
	FaultRateLimited FaultKind = "rate_limited"
	// FaultServerError is a model call failed with HTTP 500.
	FaultServerError FaultKind = "server_error"
	// FaultTimeout is a model call that got no response.
	FaultTimeout FaultKind = "timeout"
	// FaultMalformedStream is a streamed reply with an undecodable chunk.
	FaultMalformedStream FaultKind = "malformed_stream"
	// FaultTruncatedStream is a streamed reply cut before its end.
	FaultTruncatedStream FaultKind = "truncated_stream"
	// FaultSlowFirstToken is a reply whose first chunk comes late.
	FaultSlowFirstToken FaultKind = "slow_first_token"
	// FaultPanic is a tool call that panics.
	FaultPanic FaultKind = "panic"
	// FaultHang is a tool call that blocks until its context is done.
	FaultHang FaultKind = "hang"
	// FaultToolError is a tool call that fails with an error.
	FaultToolError FaultKind = "tool_error"
	// FaultSlowTool is a tool call that starts late.
	FaultSlowTool FaultKind = "slow_tool"
	// FaultAppendFailed is a journal write refused as a full disk refuses
	// it.
	FaultAppendFailed FaultKind = "append_failed"
)

// Fault describes one injected fault, as an observer receives it.
type Fault struct {
	// Kind is what was injected.
	Kind FaultKind `json:"kind"`
	// Tool and CallID name the tool call of a tool fault.
	Tool   string `json:"tool,omitempty"`
	CallID string `json:"call_id,omitempty"`
	// Session names the session of a journal fault.
	Session string `json:"session,omitempty"`
}

// Observer receives every fault a wrapper injects, as it injects it, from
// the goroutine of the faulty call. It must be safe for concurrent use and
// must not block. A nil Observer receives nothing.
type Observer func(Fault)

func (o Observer) observe(f Fault) {
	if o != nil {
		o(f)
	}
}
