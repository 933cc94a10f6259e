package actors_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory/jetstream"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
)

// seenRequests is a provider that records the requests it is sent.
type seenRequests struct {
	*scripted.Provider
	mu   sync.Mutex
	reqs []messages.Request
}

func (p *seenRequests) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	p.record(req)
	return p.Provider.Chat(ctx, req)
}

func (p *seenRequests) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	p.record(req)
	return p.Provider.Stream(ctx, req)
}

func (p *seenRequests) record(req messages.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = append(p.reqs, req)
}

// TestRuntimeOnJetStreamJournal runs a turn on a runtime whose journal and
// session memory are in NATS JetStream, then opens the same session on a
// second runtime with its own connection, as another machine would: the
// second one sees the first one's turn and the session's facts, and the
// journal holds both runtimes' turns after one activation each.
func TestRuntimeOnJetStreamJournal(t *testing.T) {
	srv := natstest.RunServer(t, natstest.Options{})
	ctx := t.Context()
	member := func(name string) (*actors.Runtime, *seenRequests, *jetstream.Journal, *jetstream.SessionMemory) {
		nc := natstest.Connect(t, srv.URL())
		j, err := jetstream.New(ctx, jetstream.Config{Conn: nc})
		if err != nil {
			t.Fatal(err)
		}
		sm, err := jetstream.NewSessionMemory(ctx, jetstream.SessionMemoryConfig{Conn: nc})
		if err != nil {
			t.Fatal(err)
		}
		prov, err := scripted.New(textScript("reply from "+name), scripted.Options{})
		if err != nil {
			t.Fatal(err)
		}
		seen := &seenRequests{Provider: prov}
		rt, err := actors.New(actors.Config{Journal: j, SessionMemory: sm, Provider: seen, Tools: runAllRegistry(t)})
		if err != nil {
			t.Fatal(err)
		}
		return rt, seen, j, sm
	}
	shutdown := func(rt *actors.Runtime) {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(sctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}

	rtA, _, _, smA := member("a")
	if err := smA.Set(ctx, "s1", "lang", "Go"); err != nil {
		t.Fatal(err)
	}
	sess, err := rtA.Open(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.Submit(ctx, messages.UserText("first"))
	if err != nil || res.Text != "reply from a" {
		t.Fatalf("turn on A = %+v, %v", res, err)
	}
	shutdown(rtA)

	rtB, seenB, jB, _ := member("b")
	defer shutdown(rtB)
	sess, err = rtB.Open(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	res, err = sess.Submit(ctx, messages.UserText("second"))
	if err != nil || res.Text != "reply from b" {
		t.Fatalf("turn on B = %+v, %v", res, err)
	}
	seenB.mu.Lock()
	req := seenB.reqs[len(seenB.reqs)-1]
	seenB.mu.Unlock()
	var texts []string
	for _, m := range req.Messages {
		texts = append(texts, m.Text())
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"lang: Go", "first", "reply from a", "second"} {
		if !strings.Contains(all, want) {
			t.Errorf("B's request lacks %q:\n%s", want, all)
		}
	}

	st, err := jB.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Activation != 2 || st.Turn != 2 {
		t.Errorf("journal state: activation %d, %d turns; want 2 and 2", st.Activation, st.Turn)
	}
}
