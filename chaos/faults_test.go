package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agcore/agcore/chaos"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/toolsys"
)

// drain reads s to its end and returns the text and the error that ended
// it (nil for a clean end).
func drain(s providers.Stream) (string, error) {
	defer s.Close()
	var b strings.Builder
	for c, err := range providers.Chunks(s) {
		if err != nil {
			return b.String(), err
		}
		b.WriteString(c.Text)
	}
	return b.String(), nil
}

func TestProvider_StreamFaults(t *testing.T) {
	req := messages.Request{Messages: []messages.Message{messages.UserText("hi")}}
	tests := []struct {
		name      string
		opts      chaos.ProviderOptions
		kind      providers.Kind
		retryable bool
		fault     chaos.FaultKind
	}{
		{"malformed", chaos.ProviderOptions{MalformedRate: 1}, providers.KindOther, false, chaos.FaultMalformedStream},
		{"truncated", chaos.ProviderOptions{TruncateRate: 1}, providers.KindTimeout, true, chaos.FaultTruncatedStream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen atomic.Int64
			tt.opts.OnFault = func(f chaos.Fault) {
				if f.Kind == tt.fault {
					seen.Add(1)
				}
			}
			p, err := chaos.NewProvider(textProvider(t), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				s, err := p.Stream(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				_, err = drain(s)
				pe, ok := errors.AsType[*providers.Error](err)
				if !ok || pe.Kind != tt.kind || !errors.Is(err, chaos.ErrInjected) || providers.IsRetryable(err) != tt.retryable {
					t.Fatalf("stream %d ended with %v, want an injected %s error (retryable %v)", i, err, tt.kind, tt.retryable)
				}
				if _, err := p.Chat(t.Context(), req); !errors.Is(err, chaos.ErrInjected) {
					t.Fatalf("chat %d: %v, want an injected error", i, err)
				}
			}
			if st := p.Stats(); st.Calls != 40 || st.Injected() != 40 || seen.Load() != 40 {
				t.Fatalf("stats %+v, observer saw %d, want 40 calls and 40 faults", st, seen.Load())
			}
		})
	}
}

func TestProvider_SlowFirstToken(t *testing.T) {
	req := messages.Request{Messages: []messages.Message{messages.UserText("hi")}}
	p, err := chaos.NewProvider(textProvider(t), chaos.ProviderOptions{SlowRate: 1, SlowFirstToken: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// The delay ends with the call's context: a cancelled call returns its
	// error instead of a reply, and the test does not wait an hour.
	ctx, cancel := context.WithCancel(t.Context())
	s, err := p.Stream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := drain(s); !errors.Is(err, context.Canceled) {
		t.Fatalf("slow stream under a cancelled context ended with %v", err)
	}
	if _, err := p.Chat(ctx, req); !errors.Is(err, context.Canceled) {
		t.Fatalf("slow chat under a cancelled context: %v", err)
	}
	fast, err := chaos.NewProvider(textProvider(t), chaos.ProviderOptions{SlowRate: 1, SlowFirstToken: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err = fast.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if text, err := drain(s); err != nil || text != "ok" {
		t.Fatalf("a slow stream that was waited for gave %q, %v", text, err)
	}
	if st := fast.Stats(); st.Slow != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestNewProvider_RatesAddUp(t *testing.T) {
	_, err := chaos.NewProvider(textProvider(t), chaos.ProviderOptions{FailRate: 0.5, TruncateRate: 0.4, SlowRate: 0.2})
	if !errors.Is(err, chaos.ErrOptions) || !strings.Contains(err.Error(), "add up") {
		t.Fatalf("rates adding to 1.1: %v", err)
	}
	_, err = chaos.NewProvider(textProvider(t), chaos.ProviderOptions{SlowFirstToken: -time.Second})
	if !errors.Is(err, chaos.ErrOptions) || !strings.Contains(err.Error(), "SlowFirstToken") {
		t.Fatalf("negative delay: %v", err)
	}
}

func TestToolSet_ErrorsAndSlowCalls(t *testing.T) {
	reg := toolsys.NewRegistry(toolsys.Config{})
	reg.MustRegister(newOKTool())
	var observed atomic.Int64
	set, err := chaos.NewToolSet(reg, chaos.ToolOptions{ErrorRate: 0.3, SlowRate: 0.3, Slow: time.Nanosecond, Seed: 5,
		OnFault: func(chaos.Fault) { observed.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	var failed, ok int64
	for range 500 {
		res, err := set.Call(t.Context(), "ok", json.RawMessage(`{}`), &toolsys.Context{CallID: "c"})
		switch {
		case err != nil:
			if !errors.Is(err, chaos.ErrInjected) {
				t.Fatalf("error %v does not wrap ErrInjected", err)
			}
			failed++
		case res.Content == "ok":
			ok++
		default:
			t.Fatalf("result %+v", res)
		}
	}
	st := set.Stats()
	if st.Errors != failed || st.Calls != 500 || ok != 500-failed || observed.Load() != st.Injected() {
		t.Fatalf("stats %+v, %d failed, %d ok, %d observed", st, failed, ok, observed.Load())
	}
	if st.Errors < 100 || st.Errors > 200 || st.Slow < 100 || st.Slow > 200 {
		t.Fatalf("%d errors and %d slow calls in 500, want about 150 each", st.Errors, st.Slow)
	}
}

func TestJournal_RefusesWritesAsAFullDisk(t *testing.T) {
	inner := newJournal(t)
	var observed atomic.Int64
	j, err := chaos.NewJournal(inner, chaos.JournalOptions{AppendFailRate: 0.5, Seed: 9, OnFault: func(f chaos.Fault) {
		if f.Kind == chaos.FaultAppendFailed && f.Session == "s" {
			observed.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var act uint64
	for act == 0 {
		act, _, err = j.Activate(ctx, "s", "")
		if err != nil && (!errors.Is(err, memory.ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, chaos.ErrInjected)) {
			t.Fatalf("Activate: %v", err)
		}
	}
	appended := 0
	for i := range 200 {
		tail, err := inner.Tail(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		got, err := j.Append(ctx, "s", act, tail, user(i, "", "x"))
		if err != nil {
			if !errors.Is(err, memory.ErrNoSpace) || !errors.Is(err, chaos.ErrInjected) {
				t.Fatalf("Append: %v", err)
			}
			if after, _ := inner.Tail(ctx, "s"); after != tail {
				t.Fatalf("a refused append moved the tail from %d to %d", tail, after)
			}
			continue
		}
		if got != tail+1 {
			t.Fatalf("Append returned %d after %d", got, tail)
		}
		appended++
	}
	st := j.Stats()
	if st.Refused != observed.Load() || st.Writes-st.Refused != int64(appended)+1 {
		t.Fatalf("stats %+v, %d observed, %d appended", st, observed.Load(), appended)
	}
	if st.Refused < 60 {
		t.Fatalf("%d of %d writes refused, want about half", st.Refused, st.Writes)
	}
	if _, err := chaos.NewJournal(inner, chaos.JournalOptions{AppendFailRate: 2}); !errors.Is(err, chaos.ErrOptions) {
		t.Fatalf("rate 2: %v", err)
	}
}
