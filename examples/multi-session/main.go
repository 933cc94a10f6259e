// Command multi-session runs many agent sessions at once on one runtime.
//
// Each session is its own actor with its own journal, history and usage;
// they share the model, the tools and the journal store. Four customers
// ask about their orders at the same moment: the program streams all four
// turns concurrently and prints their events as they arrive (interleaved,
// in an order that changes from run to run), proves that the four tool
// calls were running at the same time, sends each session a second turn
// that continues its own conversation, and ends with a per-session summary
// and the runtime's usage totals.
//
// Run it with:
//
//	go run ./examples/multi-session
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "multi-session:", err)
		os.Exit(1)
	}
}

// orders is the shop's data: order number -> status.
var orders = map[string]string{
	"1001": "on its way, arriving Thursday",
	"1002": "being packed",
	"1003": "delivered yesterday",
	"1004": "waiting for payment",
}

// OrderParams are the arguments of order_status.
type OrderParams struct {
	Order string `json:"order" jsonschema:"description=The order number"`
}

// OrderStatus looks an order up. Every call waits at a barrier until all
// the sessions' calls have arrived, which shows that they run in parallel.
type OrderStatus struct {
	barrier *barrier
}

// Name implements toolsys.Typed.
func (OrderStatus) Name() string { return "order_status" }

// Description implements toolsys.Typed.
func (OrderStatus) Description() string { return "Returns the status of an order." }

// Permission implements toolsys.Typed.
func (OrderStatus) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams implements toolsys.Typed.
func (OrderStatus) SecretParams() []string { return nil }

// Execute implements toolsys.Typed.
func (o OrderStatus) Execute(ctx context.Context, p OrderParams, _ *toolsys.Context) (toolsys.Result, error) {
	if err := o.barrier.arrive(ctx); err != nil {
		return toolsys.Result{}, err
	}
	status, ok := orders[p.Order]
	if !ok {
		return toolsys.ErrorResult("no order %s", p.Order), nil
	}
	return toolsys.Result{Content: "order " + p.Order + ": " + status}, nil
}

// barrier releases its callers once n of them have arrived.
type barrier struct {
	mu      sync.Mutex
	waiting int
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{waiting: n, open: make(chan struct{})} }

func (b *barrier) arrive(ctx context.Context) error {
	b.mu.Lock()
	if b.waiting--; b.waiting == 0 {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// script answers every customer: the question about order N calls
// order_status for N, its result gives the answer, and a thank-you closes
// the conversation. It is stateless, so concurrent sessions sharing the
// model get the same replies whatever their interleaving.
func script() scripted.Script {
	s := scripted.Script{Stateless: true}
	for _, n := range slices.Sorted(maps.Keys(orders)) {
		s.Rules = append(s.Rules,
			scripted.Rule{Match: scripted.Match{Role: messages.RoleUser, Contains: "order " + n}, Reply: scripted.Reply{
				Text:      "Let me look that up.",
				ToolCalls: []scripted.ToolCall{{Name: "order_status", Arguments: `{"order":"` + n + `"}`}},
			}},
			scripted.Rule{Match: scripted.Match{Tool: "order_status", Contains: "order " + n}, Reply: scripted.Reply{
				Text: "Your order " + n + " is " + orders[n] + ".",
			}},
		)
	}
	s.Rules = append(s.Rules, scripted.Rule{Match: scripted.Match{Role: messages.RoleUser, Contains: "Thanks"},
		Reply: scripted.Reply{Text: "You're welcome!"}})
	return s
}

// printer serialises the lines of concurrent sessions.
type printer struct {
	mu  sync.Mutex
	out io.Writer
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, format, args...)
}

// summary is what one session did.
type summary struct {
	id        string
	turns     int
	toolCalls int
	usage     messages.Usage
	answers   []string
}

func run(ctx context.Context, out io.Writer) (err error) {
	customers := slices.Sorted(maps.Keys(orders))
	reg := toolsys.NewRegistry(toolsys.Config{})
	if err := toolsys.RegisterTyped[OrderParams](reg, OrderStatus{barrier: newBarrier(len(customers))}); err != nil {
		return err
	}
	model, err := scripted.New(script(), scripted.Options{})
	if err != nil {
		return err
	}
	rt, err := actors.NewInMemory(actors.Config{
		Provider: model,
		Tools:    reg,
		Prices:   providers.PriceTable{scripted.DefaultModel: {InputPerMillion: 0.15, OutputPerMillion: 0.60}},
		Agents:   []actors.AgentProfile{{Name: "support", Prompt: "You answer questions about orders."}},
	})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Shutdown(context.WithoutCancel(ctx))) }()

	p := &printer{out: out}
	summaries := make([]*summary, len(customers))
	for i, n := range customers {
		summaries[i] = &summary{id: "customer-" + n}
	}
	// turn runs one turn of customer i's session.
	turn := func(i int, text string) error {
		s := summaries[i]
		sess, err := rt.Open(ctx, s.id)
		if err != nil {
			return err
		}
		p.printf("[%s] user: %s\n", s.id, text)
		res, err := streamTurn(ctx, p, sess, text)
		if err != nil {
			return fmt.Errorf("session %s: %w", s.id, err)
		}
		s.turns++
		s.toolCalls += len(res.toolCalls)
		s.usage = s.usage.Add(res.usage)
		s.answers = append(s.answers, res.text)
		return nil
	}
	fmt.Fprintf(out, "== %d sessions, first turn, all at once\n", len(customers))
	if err := forEach(len(customers), func(i int) error {
		return turn(i, "Hello, where is my order "+customers[i]+"?")
	}); err != nil {
		return err
	}
	fmt.Fprintf(out, "all %d order_status calls were running at the same time\n", len(customers))

	fmt.Fprintf(out, "\n== second turn: each session continues its own conversation\n")
	if err := forEach(len(customers), func(i int) error { return turn(i, "Thanks!") }); err != nil {
		return err
	}

	fmt.Fprintf(out, "\n== summary\n")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "session\tturns\ttool calls\ttokens\thistory\tfirst answer")
	for _, s := range summaries {
		sess, err := rt.Open(ctx, s.id)
		if err != nil {
			return err
		}
		st, err := sess.Status(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d messages\t%s\n", s.id, s.turns, s.toolCalls, s.usage.TotalTokens, st.Messages, s.answers[0])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	u := rt.Usage()
	calls := int64(0)
	for _, m := range u.Models {
		calls += m.Calls
	}
	fmt.Fprintf(out, "runtime total: %d model calls, %d tokens, cost $%.6f\n", calls, u.Usage.TotalTokens, u.Cost)
	return nil
}

// turnResult is what streamTurn saw of a turn.
type turnResult struct {
	text      string
	toolCalls []string
	usage     messages.Usage
}

// streamTurn runs one turn and prints its events as they arrive.
func streamTurn(ctx context.Context, p *printer, sess *actors.Session, text string) (turnResult, error) {
	var res turnResult
	id := sess.ID()
	for ev, err := range sess.Stream(ctx, messages.UserText(text)) {
		if err != nil {
			return res, err
		}
		switch e := ev.(type) {
		case messages.TurnStarted:
			p.printf("[%s] turn %d started (agent %s)\n", id, e.Turn, e.Agent)
		case messages.ToolStarted:
			p.printf("[%s]   -> %s %s\n", id, e.Name, e.Arguments)
			res.toolCalls = append(res.toolCalls, e.Name)
		case messages.ToolFinished:
			p.printf("[%s]   <- %s\n", id, e.Content)
		case messages.TurnEnded:
			if e.Outcome != messages.OutcomeCompleted {
				return res, fmt.Errorf("turn %d %s: %s", e.Turn, e.Outcome, e.Reason)
			}
			p.printf("[%s] turn %d %s: %s\n", id, e.Turn, e.Outcome, strings.TrimSpace(e.Text))
			res.text, res.usage = e.Text, e.Usage
		}
	}
	return res, nil
}

// forEach runs f(0..n-1) concurrently and returns their errors joined.
func forEach(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
