package actors

// This file holds the compactor service actor, which compacts histories
// off the turns' critical path, and its jobs.

import (
	"context"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// defaultSummaryPrompt instructs the summariser model.
const defaultSummaryPrompt = "Summarise the conversation below for the assistant that will continue it. " +
	"Keep every fact, decision, file name, open question and result of a tool that later turns may need. " +
	"Write plain prose, at most a few paragraphs."

// compactReq asks the compactor to compact a session's history. History
// and Seqs are copies of the session state's History and HistorySeq.
type compactReq struct {
	session string
	history []messages.Message
	seqs    []uint64
	replyTo *actor.PID
	gen     uint64
	// forTurn says the running turn waits for the answer; force that a
	// context-length error asked for it (summarise when possible).
	forTurn bool
	force   bool
	// parent is the span of the turn that asked, if any.
	parent trace.SpanContext
}

// compactor is the service actor that compacts histories off the turns'
// critical path: it hands each request to a child of its own, which
// micro-compacts (prunes old tool results) and, when that is not enough or
// a context-length error forced the compaction, summarises with the
// configured summariser model. The child answers the session directly.
type compactor struct {
	rt *Runtime
}

func newCompactor(rt *Runtime) *compactor { return &compactor{rt: rt} }

// Receive implements actor.Actor.
func (c *compactor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *compactReq:
		job := &compactJob{rt: c.rt, req: m}
		ctx.Spawn(actor.PropsFromProducer(func() actor.Actor { return job }))
	case *compactTreeReq:
		m.reply <- len(ctx.Children())
	case *actor.Restarting:
		c.rt.svcRestarts.compactor.Add(1)
	}
}

// compactJob compacts one history.
type compactJob struct {
	rt  *Runtime
	req *compactReq
}

// Receive implements actor.Actor.
func (j *compactJob) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); !ok {
		return
	}
	start := j.rt.clock.Now()
	sctx, span := j.compactSpan()
	ev, err := j.safeRun(sctx)
	j.rt.tel.EndCompaction(span, ev, err)
	ctx.Send(j.req.replyTo, &compactDone{gen: j.req.gen, forTurn: j.req.forTurn, force: j.req.force, event: ev, err: err, elapsed: j.rt.clock.Now().Sub(start)})
	ctx.Stop(ctx.Self())
}

// safeRun is run with a panic (of the summariser's provider, or of a
// token counter) turned into an error: the session waiting for the answer
// gets one either way, and the job is not restarted into the same panic.
func (j *compactJob) safeRun(ctx context.Context) (ev *messages.Compacted, err error) {
	defer func() {
		if v := recover(); v != nil {
			ev, err = nil, j.rt.servicePanic("compaction", j.req.session, v)
		}
	}()
	return j.run(ctx)
}

func (j *compactJob) run(ctx context.Context) (*messages.Compacted, error) {
	cfg := j.rt.cfg.Compaction.Config
	counter := cfg.Counter
	if counter == nil {
		counter = memory.Heuristic{}
	}
	hist := j.req.history
	before := counter.CountMessages(memory.Repair(hist))
	c, _ := memory.Microcompact(hist, cfg.KeepRecent)
	kind := "micro"
	after := counter.CountMessages(memory.Repair(c.Messages))
	if j.rt.cfg.Compaction.SummaryModel != "" && (j.req.force || c.Replaced == 0 || after >= memory.Threshold(cfg)) {
		sc, err := memory.SummaryCompact(ctx, hist, summarizer{j.rt}, cfg.KeepRecent)
		if err != nil && c.Replaced == 0 {
			return nil, err
		}
		if err == nil {
			c, kind = sc, "summary"
			after = counter.CountMessages(memory.Repair(c.Messages))
		}
	}
	if c.Replaced == 0 {
		return nil, fmt.Errorf("compact %s: %w", j.req.session, memory.ErrNothingToCompact)
	}
	st := &memory.State{History: hist, HistorySeq: j.req.seqs}
	ev, err := st.CompactedEvent(kind, memory.Compaction{Messages: c.Messages, Replaced: c.Replaced, Replacement: c.Replacement}, before, after)
	if err != nil {
		return nil, fmt.Errorf("compact %s: %w", j.req.session, err)
	}
	return &ev, nil
}

// summarizer asks the configured summariser model for a summary.
type summarizer struct{ rt *Runtime }

func (s summarizer) Summarize(ctx context.Context, msgs []messages.Message) (string, error) {
	p, model, err := s.rt.providers.Resolve(s.rt.cfg.Compaction.SummaryModel)
	if err != nil {
		return "", err
	}
	prompt := s.rt.cfg.Compaction.SummaryPrompt
	if prompt == "" {
		prompt = defaultSummaryPrompt
	}
	req := messages.Request{Model: model, Messages: []messages.Message{messages.SystemText(prompt), messages.UserText(transcript(msgs))}}
	resp, err := p.Chat(ctx, req)
	if err != nil {
		return "", fmt.Errorf("summarise: %w", err)
	}
	name := resp.Model
	if name == "" {
		name = model
	}
	s.rt.tracker.Record(name, resp.Usage)
	return resp.Message.Text(), nil
}

// transcript renders messages as plain text for the summariser.
func transcript(msgs []messages.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Text())
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "%s called %s(%s)\n", m.Role, c.Name, c.Arguments)
		}
	}
	return b.String()
}
