package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
)

// TestWire_RoundTrip sends every message through its envelope and the
// protobuf bytes protoactor's remote layer writes, and reads it back equal.
func TestWire_RoundTrip(t *testing.T) {
	r := NewMessages()
	msgs := []any{
		&SubmitTurn{TurnID: "t-1", Text: "héllo", Wait: 500 * time.Millisecond},
		&TurnReply{Member: "127.0.0.1:1", Result: &actors.TurnResult{Session: "s", Turn: 2, TurnID: "t-1", Outcome: messages.OutcomeCompleted, Text: "ok",
			ToolCalls: []actors.ToolCallResult{{CallID: "c1", Name: "charge", Duration: time.Second}}}},
		&TurnReply{Member: "m", Pending: true},
		&TurnReply{Member: "m", Fenced: true, Error: "fenced"},
		&StatusRequest{},
		&StatusReply{Member: "m", Status: actors.Status{Session: "s", Running: true, Activation: 3}},
		&CancelTurn{},
		&CancelReply{Member: "m", Cancelled: true},
		&UnknownReply{Member: "m", Type: "agcore.Future.v9"},
		&MemberStatusRequest{},
		&MemberStatusReply{Member: "m", Sessions: []string{"a", "b"}},
	}
	for _, msg := range msgs {
		env, err := r.Encode(msg)
		if err != nil {
			t.Fatalf("Encode(%T): %v", msg, err)
		}
		raw, err := proto.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		var back anypb.Any
		if err := proto.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		got, err := r.Decode(&back)
		if err != nil {
			t.Fatalf("Decode(%s): %v", back.TypeUrl, err)
		}
		if diff := cmp.Diff(msg, got); diff != "" {
			t.Errorf("%T round trip (-want +got):\n%s", msg, diff)
		}
	}
}

// TestWire_Unknown decodes envelopes the registry does not know into
// Unknown, keeping the type and body, and refuses bodies that are not the
// JSON of a known type or are too large, naming the type.
func TestWire_Unknown(t *testing.T) {
	r := NewMessages()
	got, err := r.Decode(&anypb.Any{TypeUrl: "agcore.Future.v9", Value: []byte(`{"x":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	u, ok := got.(*Unknown)
	if !ok || u.Type != "agcore.Future.v9" || string(u.JSON) != `{"x":1}` {
		t.Errorf("Decode(unknown) = %#v, want *Unknown with its type and body", got)
	}
	for _, env := range []*anypb.Any{
		{TypeUrl: NameSubmitTurn, Value: []byte(`{"turn_id":`)},
		{TypeUrl: NameSubmitTurn, Value: []byte(`{"wait_ns":"soon"}`)},
		{TypeUrl: NameSubmitTurn, Value: make([]byte, MaxEnvelope+1)},
		nil,
	} {
		if _, err := r.Decode(env); !errors.Is(err, ErrWire) {
			t.Errorf("Decode(%v): error %v, want ErrWire", env, err)
		}
	}
	if _, err := r.Encode(&struct{ A int }{}); !errors.Is(err, ErrWire) {
		t.Errorf("Encode(unregistered): error %v, want ErrWire", err)
	}
}

// TestRegister_Duplicates panics on a name or a type registered twice.
func TestRegister_Duplicates(t *testing.T) {
	for name, reg := range map[string]func(*Registry){
		"name": func(r *Registry) { Register[CancelReply](r, NameSubmitTurn) },
		"type": func(r *Registry) { Register[SubmitTurn](r, "agcore.Other.v1") },
		"kind": func(r *Registry) { Register[int](r, "agcore.Int.v1") },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			reg(NewMessages())
		})
	}
}

// FuzzDecode feeds arbitrary protobuf bytes, as a peer could send them,
// to the envelope decoder: it never panics, an unknown type is always an
// Unknown, and whatever decodes to a registered type encodes again.
func FuzzDecode(f *testing.F) {
	r := NewMessages()
	for _, msg := range []any{&SubmitTurn{TurnID: "t", Text: "x", Wait: 1}, &TurnReply{Pending: true}, &StatusRequest{}} {
		env, err := r.Encode(msg)
		if err != nil {
			f.Fatal(err)
		}
		raw, err := proto.Marshal(env)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte{0x0a, 0x03, 'a', 'b', 'c', 0x12, 0x01, '{'})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var env anypb.Any
		if proto.Unmarshal(raw, &env) != nil {
			return
		}
		v, err := r.Decode(&env)
		if err != nil {
			if !errors.Is(err, ErrWire) {
				t.Fatalf("Decode error %v does not wrap ErrWire", err)
			}
			return
		}
		if u, ok := v.(*Unknown); ok {
			if _, known := r.byName[env.TypeUrl]; known || u.Type != env.TypeUrl {
				t.Fatalf("Unknown %q for envelope type %q", u.Type, env.TypeUrl)
			}
			return
		}
		if _, err := r.Encode(v); err != nil {
			t.Fatalf("decoded %T does not encode again: %v", v, err)
		}
	})
}
