package scripted

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
)

// Name is the provider name that scripted errors carry.
const Name = "scripted"

// DefaultModel is the model a response names when neither the request nor
// Options do.
const DefaultModel = "scripted"

// DefaultChunkSize is the streamed piece size when Options.ChunkSize is zero.
const DefaultChunkSize = 8

// Options configures a Provider. The zero value is valid.
type Options struct {
	// Model is the model a response names when the request names none.
	// Empty means DefaultModel.
	Model string
	// ChunkSize is how many characters of text, and of each tool call's
	// arguments, a streamed chunk carries. Zero means DefaultChunkSize.
	ChunkSize int
	// Sleep waits d or until ctx is done, returning ctx's error in that
	// case. It simulates Reply.Latency and Reply.ChunkDelay. Nil means a
	// timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives a debug line per call. The zero Logger discards.
	Logger zerolog.Logger
}

// Provider is a deterministic providers.Provider that plays a Script. It is
// safe for concurrent use; in stateful mode the calls of all goroutines
// share the script's state (consumed rules, turn positions, call count),
// so use Script.Stateless when concurrent conversations must get
// reproducible replies.
type Provider struct {
	script Script
	res    []*regexp.Regexp
	opts   Options

	mu     sync.Mutex
	calls  int
	played []int // per rule: how many times it answered
}

var _ providers.Provider = (*Provider)(nil)

// New returns a Provider playing s, or a *ScriptError when s is invalid.
// s must not be modified afterwards.
func New(s Script, opts Options) (*Provider, error) {
	res, err := compile(s)
	if err != nil {
		return nil, err
	}
	if opts.Model == "" {
		opts.Model = DefaultModel
	}
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = DefaultChunkSize
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	s.Rules, s.Failures = slices.Clone(s.Rules), slices.Clone(s.Failures)
	return &Provider{script: s, res: res, opts: opts, played: make([]int, len(s.Rules))}, nil
}

// MustNew is New for scripts known to be valid, such as Demo(); it panics
// when s is invalid.
func MustNew(s Script, opts Options) *Provider {
	p, err := New(s, opts)
	if err != nil {
		panic(err)
	}
	return p
}

// Calls returns how many Chat and Stream calls the provider has received.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// Chat implements providers.Provider.
func (p *Provider) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	rep, in, err := p.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	if rep.Fail != nil {
		return nil, rep.Fail.Err()
	}
	return p.respond(req, in, rep), nil
}

// Stream implements providers.Provider. The reply is cut into chunks: the
// text in pieces of Options.ChunkSize characters, then each tool call as a
// first fragment with its id and name followed by its arguments in pieces
// (at least two when they are longer than one character), then a chunk with
// the finish reason, then one with the usage. Every chunk carries the
// response's ID and Model.
func (p *Provider) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	rep, in, err := p.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	if rep.Fail != nil && rep.Fail.AfterChunks == 0 {
		return nil, rep.Fail.Err()
	}
	st := &stream{
		ctx:    ctx,
		sleep:  p.opts.Sleep,
		delay:  rep.ChunkDelay,
		chunks: chunksOf(p.respond(req, in, rep), p.opts.ChunkSize),
		failAt: -1,
	}
	if rep.Fail != nil {
		st.failAt, st.fail = min(rep.Fail.AfterChunks, len(st.chunks)), rep.Fail.Err()
	}
	return st, nil
}

// prepare picks the reply for req and waits its latency.
func (p *Provider) prepare(ctx context.Context, req messages.Request) (Reply, input, error) {
	if err := ctx.Err(); err != nil {
		return Reply{}, input{}, err
	}
	rep, in, err := p.next(req)
	if err != nil {
		return Reply{}, in, err
	}
	if rep.Latency > 0 {
		if err := p.opts.Sleep(ctx, rep.Latency); err != nil {
			return Reply{}, in, err
		}
	}
	return rep, in, nil
}

// next chooses the reply to req and advances the script's state.
func (p *Provider) next(req messages.Request) (Reply, input, error) {
	in, ok := inputOf(req.Messages)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	call := p.calls
	for _, inj := range p.script.Failures {
		if slices.Contains(inj.Calls, call) {
			p.opts.Logger.Debug().Int("call", call).Str("fail", string(inj.Failure.Kind)).Msg("scripted: injected failure")
			return Reply{Fail: &inj.Failure}, in, nil
		}
	}
	if !ok {
		return Reply{}, in, &providers.Error{Kind: providers.KindBadRequest, Provider: Name,
			Err: fmt.Errorf("%w: the request has no user or tool message", ErrNoMatch)}
	}
	for i, r := range p.script.Rules {
		if !r.Match.matches(p.res[i], in) {
			continue
		}
		rep, ok := p.play(i, r, in)
		if !ok {
			continue
		}
		p.opts.Logger.Debug().Int("call", call).Int("rule", i).Str("name", r.Name).Msg("scripted: reply")
		return rep, in, nil
	}
	return Reply{}, in, &providers.Error{Kind: providers.KindBadRequest, Provider: Name, Err: noMatch(in)}
}

// play returns the reply of rule i for in, if the rule is not exhausted,
// and records that it answered. p.mu is held.
func (p *Provider) play(i int, r Rule, in input) (Reply, bool) {
	if p.script.Stateless {
		switch {
		case len(r.Turns) == 0:
			return r.Reply, true
		case in.step < len(r.Turns):
			return r.Turns[in.step], true
		}
		return Reply{}, false
	}
	n := p.played[i]
	switch {
	case r.Once && n > 0:
		return Reply{}, false
	case len(r.Turns) > 0 && n >= len(r.Turns):
		return Reply{}, false
	}
	p.played[i]++
	if len(r.Turns) > 0 {
		return r.Turns[n], true
	}
	return r.Reply, true
}

// respond builds the response rep gives to req.
func (p *Provider) respond(req messages.Request, in input, rep Reply) *messages.Response {
	msg := messages.Message{Role: messages.RoleAssistant, Content: messages.Text(rep.Text)}
	if len(rep.ToolCalls) > 0 {
		msg.ToolCalls = make([]messages.ToolCall, len(rep.ToolCalls))
		for i, c := range rep.ToolCalls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", in.assistants+1, i+1)
			}
			msg.ToolCalls[i] = messages.ToolCall{ID: id, Name: c.Name, Arguments: c.Arguments}
		}
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = messages.FinishStop
		if len(msg.ToolCalls) > 0 {
			finish = messages.FinishToolCalls
		}
	}
	var usage messages.Usage
	if rep.Usage != nil {
		usage = *rep.Usage
		if usage.TotalTokens == 0 {
			usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
		}
	} else {
		usage = estimateUsage(req, msg)
	}
	model := req.Model
	if model == "" {
		model = p.opts.Model
	}
	return &messages.Response{ID: responseID(req), Model: model, Message: msg, FinishReason: finish, Usage: usage}
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
