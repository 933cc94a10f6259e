package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func allJournalEvents() []JournalEvent {
	return []JournalEvent{
		Activated{Activation: 3, Node: "n1"},
		UserMessage{TurnID: "t1", Turn: 0, Message: UserText("hi")},
		AssistantMessage{Turn: 0, Message: Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: "{}"}}}, FinishReason: FinishToolCalls, Model: "m", Usage: Usage{1, 2, 3, 0, 0}, Cost: 0.1},
		ToolCallStarted{Turn: 0, CallID: "c", Name: "f", Arguments: `{"x":"<secret_ref:K>"}`},
		ToolResult{Turn: 0, CallID: "c", Name: "f", Content: "ok", IsError: true, Metadata: map[string]any{"exit_code": float64(2)}, Duration: time.Second},
		TurnCompleted{Turn: 0, TurnID: "t1", Outcome: OutcomeCompleted, FinishReason: FinishStop, Usage: Usage{1, 1, 2, 0, 0}, RoundTrips: 2},
		TurnCancelled{Turn: 1, TurnID: "t2", Reason: "user"},
		Compacted{Kind: "summary", Through: 9, Messages: []Message{UserText("summary")}, TokensBefore: 1000, TokensAfter: 100},
		ApprovalRequested{Turn: 1, CallID: "c", Tool: "bash", Reason: "ask mode"},
		ApprovalGranted{CallID: "c", By: "ann"},
		ApprovalDenied{CallID: "c", By: "policy", Reason: "timed out"},
		AgentSwitched{From: "a", To: "b", Note: "switched"},
		SubAgentSpawned{Turn: 1, CallID: "c", Child: "s/sub/c", Agent: "r", Task: "look"},
		SubAgentFinished{CallID: "c", Child: "s/sub/c", Outcome: OutcomeCompleted, Result: "found", Usage: Usage{1, 1, 2, 0, 0}},
		ElicitationRequested{Turn: 1, ID: "e1", Server: "files", CallID: "c", Message: "Which folder?", Mode: "form", Fields: []string{"folder"}},
		ElicitationResolved{ID: "e1", Action: "accept", By: "caller", Fields: []string{"folder"}},
		SamplingAnswered{Turn: 1, Server: "files", CallID: "c", Request: "1 message", Text: "hi", Model: "m", Usage: Usage{1, 2, 3, 0, 0}, Cost: 0.1},
	}
}

func TestEnvelope_RoundTrip(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	seen := map[string]bool{}
	for i, ev := range allJournalEvents() {
		if seen[ev.JournalType()] {
			t.Fatalf("duplicate journal type %q", ev.JournalType())
		}
		seen[ev.JournalType()] = true
		env, err := NewEnvelope(uint64(i+1), at, ev)
		if err != nil {
			t.Fatal(err)
		}
		b, err := env.Encode()
		if err != nil {
			t.Fatal(err)
		}
		gotEnv, got, err := DecodeEnvelope(uint64(i+1), b)
		if err != nil {
			t.Fatalf("DecodeEnvelope(%s): %v", b, err)
		}
		if gotEnv.V != EnvelopeVersion || gotEnv.Seq != uint64(i+1) || !gotEnv.At.Equal(at) || gotEnv.Type != ev.JournalType() {
			t.Errorf("envelope header = %+v", gotEnv)
		}
		if diff := cmp.Diff(ev, got); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", ev.JournalType(), diff)
		}
	}
}

func TestEnvelope_DecodeErrors(t *testing.T) {
	good, err := NewEnvelope(5, time.Unix(0, 0), UserMessage{Message: UserText("x")})
	if err != nil {
		t.Fatal(err)
	}
	future := good
	future.V = EnvelopeVersion + 1
	unknown := good
	unknown.Type = "telepathy"
	corrupt := good
	corrupt.Data = json.RawMessage(`{"turn":"not a number"}`)
	tests := []struct {
		name string
		env  Envelope
		want error
	}{
		{"future version", future, ErrUnknownVersion},
		{"unknown type", unknown, ErrUnknownType},
		{"corrupt data", corrupt, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.env.Decode()
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, tt.want) {
				t.Fatalf("Decode = %v, want *DecodeError wrapping %v", err, tt.want)
			}
			if de.Seq != 5 {
				t.Errorf("DecodeError.Seq = %d, want 5", de.Seq)
			}
		})
	}
	if _, _, err := DecodeEnvelope(7, []byte("\x00garbage")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("garbage bytes: %v", err)
	}
	b, _ := good.Encode()
	if _, _, err := DecodeEnvelope(6, b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("seq mismatch: %v", err)
	}
}

// FuzzDecodeEnvelope decodes arbitrary bytes as a stored entry: it never
// panics, an error names the seq, and an entry that decodes is either a
// version 1 envelope (which has no checksum) or carries the checksum of
// what it stores.
func FuzzDecodeEnvelope(f *testing.F) {
	for i, ev := range allJournalEvents() {
		env, _ := NewEnvelope(uint64(i), time.Unix(0, 0), ev)
		b, _ := env.Encode()
		f.Add(uint64(i), b)
	}
	f.Add(uint64(1), []byte(`{"v":1,"seq":1,"type":"user_message","data":null}`))
	f.Add(uint64(1), []byte(`{"v":2,"seq":1,"type":"user_message","data":null,"crc":"00000000"}`))
	f.Fuzz(func(t *testing.T, seq uint64, b []byte) {
		env, ev, err := DecodeEnvelope(seq, b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Seq != seq {
				t.Fatalf("error %v does not name seq %d", err, seq)
			}
			return
		}
		if ev == nil || ev.JournalType() != env.Type {
			t.Fatalf("decoded %T for type %q", ev, env.Type)
		}
		body, sum, sealed := splitChecksum(b)
		switch {
		case sealed && checksum(body) != sum:
			t.Fatalf("decoded an entry whose checksum does not match: %q", b)
		case !sealed && env.V != 1:
			t.Fatalf("decoded a version %d entry without a checksum: %q", env.V, b)
		}
	})
}

// FuzzEnvelopeDamage alters one byte of a stored entry, anywhere, in any
// way: the altered entry never decodes.
func FuzzEnvelopeDamage(f *testing.F) {
	stored := encodedJournal(f)
	f.Add(uint8(3), uint32(120), byte(0x01))
	f.Add(uint8(0), uint32(0), byte(0xff))
	f.Add(uint8(13), uint32(1<<31), byte(0x20))
	f.Fuzz(func(t *testing.T, which uint8, pos uint32, mask byte) {
		if mask == 0 {
			return
		}
		i := int(which) % len(stored)
		b := bytes.Clone(stored[i])
		b[int(pos)%len(b)] ^= mask
		if _, ev, err := DecodeEnvelope(uint64(i+1), b); err == nil {
			t.Fatalf("entry %d with byte %d changed decoded as %#v:\n%s", i+1, int(pos)%len(b), ev, b)
		}
	})
}

func FuzzUnmarshalEvent(f *testing.F) {
	f.Add([]byte(`{"type":"text_delta","data":{"session":"s","turn":1,"text":"hi"}}`))
	f.Add([]byte(`{"type":"turn_ended","data":{"outcome":"completed","usage":{}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := UnmarshalEvent(b)
		if err != nil {
			return
		}
		out, err := MarshalEvent(ev)
		if err != nil {
			t.Fatalf("re-marshal %T: %v", ev, err)
		}
		again, err := UnmarshalEvent(out)
		if err != nil || again.EventType() != ev.EventType() {
			t.Fatalf("second decode of %s: %v", out, err)
		}
	})
}

func FuzzMessageJSON(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hi"}`))
	f.Add([]byte(`{"role":"assistant","content":null,"tool_calls":[{"id":"1","name":"f","arguments":"{"}]}`))
	f.Add([]byte(`{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		if err := json.Unmarshal(b, &m); err != nil {
			return
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		var m2 Message
		if err := json.Unmarshal(out, &m2); err != nil {
			t.Fatalf("decode of own output %s: %v", out, err)
		}
	})
}
