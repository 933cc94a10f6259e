package httpapi_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// stepClock is a journal clock the test sets before each append.
type stepClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *stepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *stepClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = t
}

// usageJournal is a journal whose entries are stamped by clock, and a
// server of options o over a runtime that writes it.
func usageJournal(t *testing.T, o envOptions) (*env, *memory.BadgerJournal, *stepClock) {
	t.Helper()
	clock := &stepClock{at: time.Now()}
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone, Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = j.Close()
		_ = store.Close()
	})
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# greeter\nSays hello.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.from = &env{store: store, journal: j, workspace: ws}
	return newEnv(t, o), j, clock
}

// appendAt journals events in session at time at.
func appendAt(t *testing.T, j *memory.BadgerJournal, clock *stepClock, session string, at time.Time, events ...messages.JournalEvent) {
	t.Helper()
	clock.set(at)
	act, tail, err := j.Activate(t.Context(), session, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(t.Context(), session, act, tail, events...); err != nil {
		t.Fatal(err)
	}
}

func call(turn int, model string, prompt, completion int64, cost float64) messages.AssistantMessage {
	return messages.AssistantMessage{Turn: turn, Model: model, Message: messages.AssistantText("ok"),
		Usage: messages.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}, Cost: cost}
}

// TestUsageHistory_SumsTheJournalsByBucket journals turns of two sessions
// at known times and checks each hourly and daily bucket's sums, by model.
func TestUsageHistory_SumsTheJournalsByBucket(t *testing.T) {
	e, j, clock := usageJournal(t, envOptions{script: okScript()})
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	h := func(hours, minutes int) time.Time {
		return day.Add(time.Duration(hours)*time.Hour + time.Duration(minutes)*time.Minute)
	}
	user := func(turn int) messages.UserMessage {
		return messages.UserMessage{Turn: turn, Message: messages.UserText("hi")}
	}
	// Session a: a turn at 10:05 with two calls to two models, a failed
	// turn at 10:40; session b: a cancelled turn at 12:30 and a turn the
	// next day at 03:00. Turns a day before since are not counted, nor is a
	// session whose whole journal precedes since.
	appendAt(t, j, clock, "a", h(-20, 0), user(0), call(0, "old", 1000, 1000, 9), messages.TurnCompleted{Turn: 0, Outcome: messages.OutcomeCompleted})
	appendAt(t, j, clock, "a", h(10, 5), user(1), call(1, "m1", 100, 10, 0.5), call(1, "m2", 200, 20, 0.25),
		messages.TurnCompleted{Turn: 1, Outcome: messages.OutcomeCompleted})
	appendAt(t, j, clock, "a", h(10, 40), user(2), call(2, "m1", 50, 5, 0.125),
		messages.TurnCompleted{Turn: 2, Outcome: messages.OutcomeFailed, Reason: "boom"})
	appendAt(t, j, clock, "b", h(12, 30), user(0), call(0, "m1", 7, 3, 0), messages.TurnCancelled{Turn: 0, Reason: "cancelled"})
	appendAt(t, j, clock, "before", h(-30, 0), user(0), call(0, "older", 1, 1, 1), messages.TurnCompleted{Outcome: messages.OutcomeCompleted})
	appendAt(t, j, clock, "b", h(27, 0), user(1), call(1, "m2", 1, 2, 1), messages.TurnCompleted{Turn: 1, Outcome: messages.OutcomeCompleted})

	get := func(query string) httpapi.UsageHistory {
		t.Helper()
		resp, body := e.do(http.MethodGet, "/v1/usage/history?"+query, "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("usage history ?%s: %d %s", query, resp.StatusCode, body)
		}
		return decode[httpapi.UsageHistory](t, body)
	}
	hourly := get("since=" + url.QueryEscape(h(9, 30).Format(time.RFC3339)))
	if hourly.Bucket != "1h" || !hourly.Since.Equal(h(9, 0)) {
		t.Fatalf("bucket %q since %v, want 1h since %v", hourly.Bucket, hourly.Since, h(9, 0))
	}
	if got, want := strings.Join(hourly.Models, ","), "m1,m2"; got != want {
		t.Errorf("models %q, want %q", got, want)
	}
	type sums struct {
		prompt, completion int64
		cost               float64
		turns              int
	}
	want := map[time.Time]sums{
		h(10, 0): {350, 35, 0.875, 2},
		h(12, 0): {7, 3, 0, 1},
		h(27, 0): {1, 2, 1, 1},
	}
	seen := 0
	for i, b := range hourly.Buckets {
		if want := h(9+i, 0); !b.Start.Equal(want) {
			t.Fatalf("bucket %d starts %v, want %v", i, b.Start, want)
		}
		got := sums{b.Usage.PromptTokens, b.Usage.CompletionTokens, b.Cost, b.Turns}
		if w, ok := want[b.Start]; ok {
			seen++
			if got != w {
				t.Errorf("bucket %v = %+v, want %+v", b.Start, got, w)
			}
		} else if got != (sums{}) {
			t.Errorf("bucket %v = %+v, want it empty", b.Start, got)
		}
	}
	if seen != len(want) {
		t.Fatalf("%d of the %d journaled buckets were listed", seen, len(want))
	}
	ten := hourly.Buckets[1]
	if m := ten.Models["m1"]; m.Usage.PromptTokens != 150 || m.Cost != 0.625 || m.Calls != 2 {
		t.Errorf("10:00 m1 = %+v, want 150 prompt tokens, cost 0.625, 2 calls", m)
	}
	if m := ten.Models["m2"]; m.Usage.CompletionTokens != 20 || m.Cost != 0.25 || m.Calls != 1 {
		t.Errorf("10:00 m2 = %+v, want 20 completion tokens, cost 0.25, 1 call", m)
	}

	if active := e.rt.Sessions(); len(active) != 0 {
		t.Errorf("reading the history activated %v", active)
	}

	daily := get("bucket=1d&since=" + url.QueryEscape(h(-20, 0).Format(time.RFC3339)))
	if len(daily.Buckets) != 4 || !daily.Since.Equal(day.Add(-24*time.Hour)) {
		t.Fatalf("daily: %d buckets since %v, want 4 since %v", len(daily.Buckets), daily.Since, day.Add(-24*time.Hour))
	}
	for i, w := range []sums{{1000, 1000, 9, 1}, {357, 38, 0.875, 3}, {1, 2, 1, 1}, {}} {
		b := daily.Buckets[i]
		if got := (sums{b.Usage.PromptTokens, b.Usage.CompletionTokens, b.Cost, b.Turns}); got != w {
			t.Errorf("day %v = %+v, want %+v", b.Start, got, w)
		}
	}
}

// TestUsageHistory_DefaultsToTheLastSevenDays checks that without since
// the history starts 7 days ago: a turn of 8 days ago is left out and one
// of 6 days ago counted.
func TestUsageHistory_DefaultsToTheLastSevenDays(t *testing.T) {
	e, j, clock := usageJournal(t, envOptions{script: okScript()})
	now := time.Now()
	appendAt(t, j, clock, "a", now.Add(-8*24*time.Hour), call(0, "m", 1000, 0, 0), messages.TurnCompleted{Outcome: messages.OutcomeCompleted})
	appendAt(t, j, clock, "a", now.Add(-6*24*time.Hour), call(1, "m", 5, 0, 0), messages.TurnCompleted{Turn: 1, Outcome: messages.OutcomeCompleted})
	resp, body := e.do(http.MethodGet, "/v1/usage/history", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("usage history: %d %s", resp.StatusCode, body)
	}
	hist := decode[httpapi.UsageHistory](t, body)
	var prompt int64
	turns := 0
	for _, b := range hist.Buckets {
		prompt += b.Usage.PromptTokens
		turns += b.Turns
	}
	if prompt != 5 || turns != 1 {
		t.Errorf("the last 7 days hold %d prompt tokens in %d turns, want 5 in 1", prompt, turns)
	}
	if hist.Bucket != "1h" || len(hist.Buckets) < 7*24 || len(hist.Buckets) > 7*24+2 {
		t.Errorf("bucket %q with %d buckets, want 1h with 7 days of them", hist.Bucket, len(hist.Buckets))
	}
}

// TestUsageHistory_NeedsTheToken checks that without the token the history
// is a 401 that names no model and no number of the journals.
func TestUsageHistory_NeedsTheToken(t *testing.T) {
	e, j, clock := usageJournal(t, envOptions{script: okScript(), token: "s3cret"})
	appendAt(t, j, clock, "a", time.Now(), call(0, "secret-model", 4242, 0, 0), messages.TurnCompleted{Outcome: messages.OutcomeCompleted})
	resp, body := e.do(http.MethodGet, "/v1/usage/history", "", "Authorization", "")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", resp.StatusCode)
	}
	if strings.Contains(string(body), "secret-model") || strings.Contains(string(body), "4242") {
		t.Errorf("the 401 discloses the history: %s", body)
	}
	resp, body = e.do(http.MethodGet, "/v1/usage/history", "", "Authorization", "Bearer s3cret")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "secret-model") {
		t.Errorf("with the token: %d %s, want the history", resp.StatusCode, body)
	}
}

// TestUsageHistory_RejectsBadParameters checks that a bad value is a 400
// that names the parameter.
func TestUsageHistory_RejectsBadParameters(t *testing.T) {
	e := newEnv(t, envOptions{script: okScript()})
	future := time.Now().Add(48 * time.Hour).Format(time.RFC3339)
	for _, tc := range []struct{ query, names string }{
		{"bucket=5m", "bucket"},
		{"bucket=", ""},
		{"since=yesterday", "since"},
		{"since=2026-01-02", "since"},
		{"since=" + url.QueryEscape(future), "since"},
		{"since=0001-01-01T00:00:00Z", "since"},
	} {
		resp, body := e.do(http.MethodGet, "/v1/usage/history?"+tc.query, "")
		if tc.names == "" {
			if resp.StatusCode != http.StatusOK {
				t.Errorf("?%s: %d %s, want 200 (the default)", tc.query, resp.StatusCode, body)
			}
			continue
		}
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("?%s: %d, want 400", tc.query, resp.StatusCode)
			continue
		}
		if eb := errorBody(t, body); eb.Code != httpapi.CodeBadRequest || !strings.Contains(eb.Message, tc.names) {
			t.Errorf("?%s: %s %q, want bad_request naming %s", tc.query, eb.Code, eb.Message, tc.names)
		}
	}
}

// BenchmarkUsageHistory answers a week by hour over 200 sessions of 10
// turns each (6,000 journal entries).
func BenchmarkUsageHistory(b *testing.B) {
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = j.Close()
		_ = store.Close()
	})
	for s := range 200 {
		id := "s" + strconv.Itoa(s)
		act, tail, err := j.Activate(b.Context(), id, "bench")
		if err != nil {
			b.Fatal(err)
		}
		for turn := range 10 {
			if tail, err = j.Append(b.Context(), id, act, tail, messages.UserMessage{Turn: turn, Message: messages.UserText("hi")},
				call(turn, "m", 100, 10, 0.001), messages.TurnCompleted{Turn: turn, Outcome: messages.OutcomeCompleted}); err != nil {
				b.Fatal(err)
			}
		}
	}
	e := newEnv(b, envOptions{script: okScript(), config: func(c *httpapi.Config) { c.Journal = j }})
	b.ResetTimer()
	for b.Loop() {
		resp, body := e.do(http.MethodGet, "/v1/usage/history", "")
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("usage history: %d %s", resp.StatusCode, body)
		}
	}
}
