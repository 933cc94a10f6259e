package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agcore/agcore/messages"
)

// Compaction defaults.
const (
	DefaultContextWindow  = 128_000
	DefaultReservedOutput = 20_000
	DefaultBuffer         = 13_000
	DefaultKeepRecent     = 6
	// BreakerLimit is the number of consecutive failures that trips a Breaker.
	BreakerLimit = 3
)

// PrunedContent replaces the content of a tool message that micro-compaction
// pruned.
const PrunedContent = "[pruned]"

// SummaryPrefix opens the message that replaces a summarised prefix.
const SummaryPrefix = "[Summary of the earlier conversation]\n"

// ErrNothingToCompact is returned when there is no prefix to compact.
var ErrNothingToCompact = errors.New("memory: nothing to compact")

// CompactionConfig sizes the context. The zero value is the default: a
// 128,000-token window, 20,000 reserved for the reply, a 13,000 buffer
// (threshold 95,000), the last 6 messages kept, and the Heuristic counter.
type CompactionConfig struct {
	// ContextWindow is the model's context size in tokens. Zero means 128,000.
	ContextWindow int
	// ReservedOutput is kept free for the reply. Zero means 20,000; negative
	// means none.
	ReservedOutput int
	// Buffer is kept free on top of ReservedOutput. Zero means 13,000;
	// negative means none.
	Buffer int
	// KeepRecent is the number of trailing messages compaction never
	// touches. Zero means 6.
	KeepRecent int
	// Counter counts the history's tokens. Nil means Heuristic.
	Counter TokenCounter
}

func (c CompactionConfig) withDefaults() CompactionConfig {
	if c.ContextWindow == 0 {
		c.ContextWindow = DefaultContextWindow
	}
	c.ReservedOutput = defaultOrNone(c.ReservedOutput, DefaultReservedOutput)
	c.Buffer = defaultOrNone(c.Buffer, DefaultBuffer)
	if c.KeepRecent <= 0 {
		c.KeepRecent = DefaultKeepRecent
	}
	if c.Counter == nil {
		c.Counter = Heuristic{}
	}
	return c
}

func defaultOrNone(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// Threshold returns the token count at which the history should be
// compacted: context window − reserved output − buffer, never below 0. The
// defaults give 95,000.
func Threshold(cfg CompactionConfig) int {
	return cfg.withDefaults().threshold()
}

// threshold computes the threshold of a config with its defaults applied.
func (c CompactionConfig) threshold() int {
	return max(c.ContextWindow-c.ReservedOutput-c.Buffer, 0)
}

// ShouldCompact reports whether msgs reach the threshold. It is false while
// the breaker is tripped; a nil breaker never is.
func ShouldCompact(msgs []messages.Message, cfg CompactionConfig, b *Breaker) bool {
	if b.Tripped() {
		return false
	}
	cfg = cfg.withDefaults()
	return cfg.Counter.CountMessages(msgs) >= cfg.threshold()
}

// Compaction is the result of a compaction: Messages is the new history,
// the Replacement followed by the input from index Replaced on, verbatim.
// State.CompactedEvent turns it into the journal event.
type Compaction struct {
	Messages    []messages.Message
	Replaced    int
	Replacement []messages.Message
}

// Microcompact prunes old tool results: the content of every tool message
// outside the last keep messages (zero or negative means 6) becomes
// PrunedContent. Other messages are never changed, and the input is not
// modified. freed is the Heuristic estimate of the newly pruned messages
// before pruning; messages pruned earlier count nothing. With nothing to
// prune, freed is 0 and Replaced is 0.
func Microcompact(msgs []messages.Message, keep int) (c Compaction, freed int) {
	if keep <= 0 {
		keep = DefaultKeepRecent
	}
	c.Messages = slices.Clone(msgs)
	if len(msgs) <= keep {
		return c, 0
	}
	cut := len(msgs) - keep
	last := -1
	for i := range cut {
		m := msgs[i]
		if m.Role != messages.RoleTool || m.Text() == PrunedContent {
			continue
		}
		freed += Heuristic{}.countMessage(m)
		m.Content = messages.Text(PrunedContent)
		c.Messages[i] = m
		last = i
	}
	if last < 0 {
		return c, 0
	}
	// Replace up to the end of the tool group holding the last pruned
	// message, so the cut never falls between two results of one call.
	c.Replaced = last + 1
	for c.Replaced < len(msgs) && msgs[c.Replaced].Role == messages.RoleTool {
		c.Replaced++
	}
	c.Replacement = slices.Clone(c.Messages[:c.Replaced])
	return c, freed
}

// Summarizer condenses a conversation into a summary. Implementations are
// safe for concurrent use.
type Summarizer interface {
	Summarize(ctx context.Context, msgs []messages.Message) (string, error)
}

// SummarizerFunc adapts a function to Summarizer.
type SummarizerFunc func(ctx context.Context, msgs []messages.Message) (string, error)

// Summarize implements Summarizer.
func (f SummarizerFunc) Summarize(ctx context.Context, msgs []messages.Message) (string, error) {
	return f(ctx, msgs)
}

// SummaryCompact replaces a prefix of msgs with one user message holding
// SummaryPrefix and the summary, and keeps the last keepTail messages (zero
// or negative means 6) verbatim. A user message, not a system message,
// because the history stores no system messages, and not an assistant
// message, because providers expect a conversation to open with the user.
// The cut moves earlier until it is not followed by a tool message, so an
// assistant message stays with its tool results. The summarizer reads the
// prefix as Repair makes it. ErrNothingToCompact when no prefix is left.
func SummaryCompact(ctx context.Context, msgs []messages.Message, s Summarizer, keepTail int) (Compaction, error) {
	if keepTail <= 0 {
		keepTail = DefaultKeepRecent
	}
	cut := len(msgs) - keepTail
	for cut > 0 && cut < len(msgs) && msgs[cut].Role == messages.RoleTool {
		cut--
	}
	if cut <= 0 {
		return Compaction{}, fmt.Errorf("%w: %d messages, keeping %d", ErrNothingToCompact, len(msgs), keepTail)
	}
	summary, err := s.Summarize(ctx, Repair(msgs[:cut]))
	if err != nil {
		return Compaction{}, fmt.Errorf("memory: summarize %d messages: %w", cut, err)
	}
	if strings.TrimSpace(summary) == "" {
		return Compaction{}, fmt.Errorf("memory: summarize %d messages: empty summary", cut)
	}
	repl := []messages.Message{messages.UserText(SummaryPrefix + summary)}
	return Compaction{
		Messages:    append(slices.Clone(repl), msgs[cut:]...),
		Replaced:    cut,
		Replacement: repl,
	}, nil
}

// Breaker stops compaction after BreakerLimit consecutive failures and
// closes again on a success. The zero value is closed. A Breaker is not safe
// for concurrent use; its owner (one compactor) serialises calls.
type Breaker struct {
	failures int
}

// Success records a successful compaction and closes the breaker.
func (b *Breaker) Success() { b.failures = 0 }

// Failure records a failed compaction and reports whether the breaker is
// now tripped.
func (b *Breaker) Failure() (tripped bool) {
	b.failures++
	return b.Tripped()
}

// Tripped reports whether compaction should stop being attempted. A nil
// Breaker is never tripped.
func (b *Breaker) Tripped() bool { return b != nil && b.failures >= BreakerLimit }

// Failures returns the number of consecutive failures.
func (b *Breaker) Failures() int { return b.failures }
