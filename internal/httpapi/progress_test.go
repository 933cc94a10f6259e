package httpapi_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/messages"
)

// TestStream_ToolProgress streams a tool's progress report as a
// tool_progress frame between the call's tool_started and tool_finished,
// and the frame matches the schema the OpenAPI document gives it.
func TestStream_ToolProgress(t *testing.T) {
	d := loadOpenAPI(t)
	e := newEnv(t, envOptions{script: exploreScript()})
	c := &conformance{t: t, d: d, e: e, covered: map[string]bool{}}
	e.createSession("s1")
	resp := e.send("POST", "/v1/sessions/s1/turns", `{"input":"report on it"}`, "Accept", "text/event-stream")
	defer resp.Body.Close()
	turnPtr := c.response("POST /v1/sessions/{id}/turns", resp)
	sse := newSSEReader(resp.Body)
	frames := sse.until(t, "tool_progress")
	got := frames[len(frames)-1].event(t).(messages.ToolProgress)
	want := messages.ToolProgress{EventMeta: messages.EventMeta{Session: "s1"}, CallID: got.CallID, Name: "block", Progress: 1, Total: 2, Message: "half way"}
	if diff := cmp.Diff(want, got); diff != "" || got.CallID == "" {
		t.Errorf("tool_progress (-want +got):\n%s", diff)
	}
	close(e.block.release)
	frames = append(frames, sse.rest(t)...)
	types := types(frames)
	started, progress, finished := slices.Index(types, "tool_started"), slices.Index(types, "tool_progress"), slices.Index(types, "tool_finished")
	if started < 0 || !(started < progress && progress < finished) || types[len(types)-1] != "turn_ended" {
		t.Errorf("frames %v, want tool_started < tool_progress < tool_finished, then turn_ended", types)
	}
	for _, f := range frames {
		c.frame(turnPtr, f)
	}
}
