package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/toolsys"
)

// fuzzProvider answers a user message with the reply registered under its
// text, and anything after a tool round trip with "done".
type fuzzProvider struct {
	replies sync.Map // user text -> messages.Message
}

func (p *fuzzProvider) reply(req messages.Request) *messages.Response {
	msgs := req.Messages
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != messages.RoleUser {
		return &messages.Response{Message: messages.Message{Role: messages.RoleAssistant, Content: messages.Text("done")},
			FinishReason: messages.FinishStop}
	}
	v, ok := p.replies.Load(msgs[len(msgs)-1].Text())
	if !ok {
		return &messages.Response{Message: messages.Message{Role: messages.RoleAssistant, Content: messages.Text("unknown case")},
			FinishReason: messages.FinishStop}
	}
	msg := v.(messages.Message)
	finish := messages.FinishStop
	if len(msg.ToolCalls) > 0 {
		finish = messages.FinishToolCalls
	}
	return &messages.Response{Message: msg, FinishReason: finish, Usage: messages.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}}
}

func (p *fuzzProvider) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.reply(req), nil
}

func (p *fuzzProvider) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	resp, err := p.Chat(ctx, req)
	if err != nil {
		return nil, err
	}
	return &oneChunkStream{resp: resp}, nil
}

// oneChunkStream streams a response's text as one chunk.
type oneChunkStream struct {
	resp *messages.Response
	sent bool
}

func (s *oneChunkStream) Recv() (providers.Chunk, error) {
	if s.sent {
		return providers.Chunk{}, io.EOF
	}
	s.sent = true
	return providers.Chunk{Text: s.resp.Message.Text(), FinishReason: s.resp.FinishReason}, nil
}

func (s *oneChunkStream) Response() *messages.Response { return s.resp }
func (s *oneChunkStream) Close() error                 { return nil }

// FuzzModelOutput feeds arbitrary assistant replies (text, and up to four
// tool calls with arbitrary names, ids and argument strings) to a session.
// Every turn must end with a TurnEnded, and the journal must replay.
func FuzzModelOutput(f *testing.F) {
	f.Add("hello", uint8(0), "", "", "", "", "", "")
	f.Add("", uint8(1), "call_1", "echo", `{"a":1}`, "", "", "")
	f.Add("two", uint8(2), "same", "echo", `{}`, "same", "fail", `{}`)
	f.Add("", uint8(2), "", "", "not json", "", "panic", `{"x":`)
	f.Add("unicode ✓ \x00", uint8(3), "a/b", "nope", "[]", "tool/a", "retrieve", `{"query":""}`)
	f.Add("", uint8(4), "x", "echo", `null`, "x", "echo", `"str"`)

	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		f.Fatal(err)
	}
	defer store.Close()
	reg := toolsys.NewRegistry(toolsys.Config{})
	reg.MustRegister(echoTool("echo"))
	reg.MustRegister(&funcTool{name: "fail", fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{}, errors.New("fuzz failure")
	}})
	reg.MustRegister(&funcTool{name: "panic", fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		panic("fuzz panic")
	}})
	prov := &fuzzProvider{}
	rt, err := actors.New(actors.Config{Provider: prov, Tools: reg, Store: store, Durability: memory.DurabilityNone,
		Limits: actors.Limits{MaxRoundTrips: 3, ToolTimeout: 10 * time.Second}})
	if err != nil {
		f.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			f.Errorf("Shutdown: %v", err)
		}
	}()
	journal, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		f.Fatal(err)
	}
	var n atomic.Int64

	f.Fuzz(func(t *testing.T, text string, calls uint8, id1, name1, args1, id2, name2, args2 string) {
		specs := [][3]string{{id1, name1, args1}, {id2, name2, args2}}
		msg := messages.Message{Role: messages.RoleAssistant, Content: messages.Text(text)}
		for i := range int(calls % 5) {
			s := specs[i%2]
			msg.ToolCalls = append(msg.ToolCalls, messages.ToolCall{ID: s[0], Name: s[1], Arguments: s[2]})
		}
		i := n.Add(1)
		key := fmt.Sprintf("case %d", i)
		prov.replies.Store(key, msg)
		defer prov.replies.Delete(key)
		id := fmt.Sprintf("fuzz-%d", i)
		sess, err := rt.Open(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		var ended *messages.TurnEnded
		for ev, err := range sess.Stream(ctx, messages.UserText(key)) {
			if err != nil {
				t.Fatalf("stream ended with %v before TurnEnded (reply %+v)", err, msg)
			}
			if e, ok := ev.(messages.TurnEnded); ok {
				ended = &e
			}
		}
		if ended == nil {
			t.Fatalf("no TurnEnded (reply %+v)", msg)
		}
		switch ended.Outcome {
		case messages.OutcomeCompleted, messages.OutcomeFailed, messages.OutcomeLimit:
		default:
			t.Fatalf("outcome %q (reply %+v)", ended.Outcome, msg)
		}
		st, err := journal.Load(ctx, id)
		if err != nil {
			t.Fatalf("journal replay: %v (reply %+v)", err, msg)
		}
		if st.Open != nil {
			t.Fatalf("the journal leaves turn %d open (reply %+v)", st.Open.Turn, msg)
		}
		if strings.TrimSpace(ended.TurnID) == "" {
			t.Fatalf("TurnEnded without a turn id: %+v", ended)
		}
	})
}
