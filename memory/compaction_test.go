package memory_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

func TestThreshold(t *testing.T) {
	tests := []struct {
		name string
		cfg  memory.CompactionConfig
		want int
	}{
		{"defaults", memory.CompactionConfig{}, 95_000},
		{"window only", memory.CompactionConfig{ContextWindow: 200_000}, 167_000},
		{"saturates at zero", memory.CompactionConfig{ContextWindow: 30_000}, 0},
		{"no reserve, no buffer", memory.CompactionConfig{ContextWindow: 8_000, ReservedOutput: -1, Buffer: -1}, 8_000},
		{"custom", memory.CompactionConfig{ContextWindow: 32_000, ReservedOutput: 4_000, Buffer: 1_000}, 27_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := memory.Threshold(tc.cfg); got != tc.want {
				t.Errorf("Threshold = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestShouldCompact(t *testing.T) {
	cfg := memory.CompactionConfig{ContextWindow: 100, ReservedOutput: -1, Buffer: -1}
	small := []messages.Message{messages.UserText(strings.Repeat("x", 30))}         // 4 + 40 = 44
	big := []messages.Message{messages.UserText(strings.Repeat("x", 72)), small[0]} // 4 + 96 + 44 = 144
	exact := []messages.Message{messages.UserText(strings.Repeat("x", 72))}         // 100
	tripped := &memory.Breaker{}
	for range memory.BreakerLimit {
		tripped.Failure()
	}
	tests := []struct {
		name string
		msgs []messages.Message
		b    *memory.Breaker
		want bool
	}{
		{"below", small, nil, false},
		{"at threshold", exact, nil, true},
		{"above", big, &memory.Breaker{}, true},
		{"above but tripped", big, tripped, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := memory.ShouldCompact(tc.msgs, cfg, tc.b); got != tc.want {
				t.Errorf("ShouldCompact = %v, want %v (estimate %d, threshold %d)", got, tc.want, memory.Heuristic{}.CountMessages(tc.msgs), memory.Threshold(cfg))
			}
		})
	}
}

func TestMicrocompact(t *testing.T) {
	long := strings.Repeat("r", 30) // 40 tokens + 4
	history := []messages.Message{
		messages.UserText("q"),
		assistantCalling("a", "b"),
		messages.ToolResultMessage("a", long),
		messages.ToolResultMessage("b", long),
		messages.AssistantText("x"),
		assistantCalling("c"),
		messages.ToolResultMessage("c", long),
		messages.AssistantText("y"),
		messages.UserText("q2"),
		assistantCalling("d"),
		messages.ToolResultMessage("d", long),
		messages.AssistantText("z"),
	}
	orig := slices.Clone(history)

	t.Run("short history untouched", func(t *testing.T) {
		c, freed := memory.Microcompact(history[:6], 6)
		if freed != 0 || c.Replaced != 0 || !cmp.Equal(c.Messages, history[:6]) {
			t.Errorf("Microcompact(6 messages, keep 6) = %d freed, %d replaced", freed, c.Replaced)
		}
	})

	t.Run("prunes tool messages outside the kept tail", func(t *testing.T) {
		c, freed := memory.Microcompact(history, 0) // 0 means 6: keeps the last 6
		if freed != 2*44 {
			t.Errorf("freed = %d, want %d", freed, 2*44)
		}
		for i, m := range c.Messages {
			pruned := m.Text() == memory.PrunedContent
			if wantPruned := i == 2 || i == 3; pruned != wantPruned {
				t.Errorf("message %d pruned = %v, want %v", i, pruned, wantPruned)
			}
			if m.Role != messages.RoleTool && !cmp.Equal(m, history[i]) {
				t.Errorf("non-tool message %d changed", i)
			}
		}
		if c.Replaced != 4 || !cmp.Equal(c.Replacement, c.Messages[:4]) {
			t.Errorf("Replaced = %d, want 4 (through the last pruned tool group)", c.Replaced)
		}
		if !cmp.Equal(history, orig) {
			t.Error("Microcompact modified its input")
		}
		again, freed := memory.Microcompact(c.Messages, 6)
		if freed != 0 || again.Replaced != 0 {
			t.Errorf("second Microcompact freed %d, replaced %d; want 0, 0 (already pruned)", freed, again.Replaced)
		}
	})

	t.Run("cut inside a tool group replaces the whole group", func(t *testing.T) {
		c, _ := memory.Microcompact(history, 9) // boundary between results a and b
		if c.Replaced != 4 || c.Messages[2].Text() != memory.PrunedContent || c.Messages[3].Text() == memory.PrunedContent {
			t.Errorf("Replaced = %d, messages %q %q", c.Replaced, c.Messages[2].Text(), c.Messages[3].Text())
		}
	})
}

type fakeSummarizer struct {
	got     []messages.Message
	summary string
	err     error
}

func (f *fakeSummarizer) Summarize(_ context.Context, msgs []messages.Message) (string, error) {
	f.got = msgs
	return f.summary, f.err
}

func TestSummaryCompact(t *testing.T) {
	history := []messages.Message{
		messages.UserText("q0"),
		assistantCalling("a", "b"), // b never answered
		messages.ToolResultMessage("a", "A"),
		messages.AssistantText("a0"),
		messages.UserText("q1"),
		assistantCalling("c"),
		messages.ToolResultMessage("c", "C"),
		messages.AssistantText("a1"),
	}
	t.Run("keeps the tail and the tool group together", func(t *testing.T) {
		s := &fakeSummarizer{summary: "they talked"}
		c, err := memory.SummaryCompact(t.Context(), history, s, 2) // the last 2 start at a tool message
		if err != nil {
			t.Fatal(err)
		}
		if c.Replaced != 5 {
			t.Errorf("Replaced = %d, want 5 (the cut moves before the assistant's tool call)", c.Replaced)
		}
		want := append([]messages.Message{messages.UserText(memory.SummaryPrefix + "they talked")}, history[5:]...)
		if diff := cmp.Diff(want, c.Messages); diff != "" {
			t.Errorf("Messages (-want +got):\n%s", diff)
		}
		if err := messages.Validate(c.Messages); err != nil {
			t.Errorf("compacted history does not validate: %v", err)
		}
		if err := messages.Validate(s.got); err != nil {
			t.Errorf("summarizer input does not validate: %v", err)
		}
	})
	t.Run("nothing to compact", func(t *testing.T) {
		for _, keep := range []int{8, 20} {
			if _, err := memory.SummaryCompact(t.Context(), history, &fakeSummarizer{summary: "x"}, keep); !errors.Is(err, memory.ErrNothingToCompact) {
				t.Errorf("keep %d: error = %v, want ErrNothingToCompact", keep, err)
			}
		}
		// The only cut that keeps the group together is at 0.
		if _, err := memory.SummaryCompact(t.Context(), history[1:3], &fakeSummarizer{summary: "x"}, 1); !errors.Is(err, memory.ErrNothingToCompact) {
			t.Errorf("error = %v, want ErrNothingToCompact", err)
		}
	})
	t.Run("summarizer errors", func(t *testing.T) {
		boom := errors.New("boom")
		if _, err := memory.SummaryCompact(t.Context(), history, &fakeSummarizer{err: boom}, 0); !errors.Is(err, boom) {
			t.Errorf("error = %v, want boom", err)
		}
		if _, err := memory.SummaryCompact(t.Context(), history, memory.SummarizerFunc(func(context.Context, []messages.Message) (string, error) {
			return "  ", nil
		}), 0); err == nil {
			t.Error("an empty summary was accepted")
		}
	})
	t.Run("journaled and folded", func(t *testing.T) {
		st := fold(t,
			userMsg(0, "q0"), asst(0, "", "a"), result(0, "a", "A"), asst(0, "a0"), messages.TurnCompleted{Turn: 0},
			userMsg(1, "q1"), asst(1, "a1"), messages.TurnCompleted{Turn: 1},
		)
		c, err := memory.SummaryCompact(t.Context(), st.History, &fakeSummarizer{summary: "s"}, 2)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := st.CompactedEvent("summary", c, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		apply(t, st, ev)
		if diff := cmp.Diff(c.Messages, st.History); diff != "" {
			t.Errorf("folded history differs from the compaction (-want +got):\n%s", diff)
		}
	})
}

func TestBreaker(t *testing.T) {
	var b memory.Breaker
	for i := 1; i < memory.BreakerLimit; i++ {
		if b.Failure() || b.Tripped() {
			t.Fatalf("tripped after %d failures", i)
		}
	}
	if !b.Failure() || !b.Tripped() || b.Failures() != 3 {
		t.Fatalf("not tripped after %d failures", memory.BreakerLimit)
	}
	b.Success()
	if b.Tripped() || b.Failures() != 0 {
		t.Error("Success did not reset the breaker")
	}
	var nilBreaker *memory.Breaker
	if nilBreaker.Tripped() {
		t.Error("a nil breaker is tripped")
	}
}
