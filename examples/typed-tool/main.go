// Command typed-tool shows how to write a tool for agcore.
//
// A tool is a Go type with a parameter struct: the struct is both the JSON
// Schema the model sees (reflected once from its json and jsonschema tags,
// then normalised) and the parser of the model's arguments, which are
// validated before Execute runs. The program registers the tool, prints its
// normalised schema, shows the error results that bad arguments produce,
// and lets a scripted model call it through a session: the model's first
// call has a wrong currency, it reads the error naming the field, and
// corrects itself.
//
// Run it with:
//
//	go run ./examples/typed-tool
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "typed-tool:", err)
		os.Exit(1)
	}
}

// ConvertParams are the arguments of the convert tool. A plain field is
// required; omitempty makes it optional. Descriptions, enums and bounds
// come from the jsonschema tags.
type ConvertParams struct {
	Amount   float64 `json:"amount" jsonschema:"description=The amount to convert,minimum=0"`
	From     string  `json:"from" jsonschema:"description=ISO 4217 code of the amount's currency,enum=EUR,enum=GBP,enum=USD"`
	To       string  `json:"to" jsonschema:"description=ISO 4217 code of the wanted currency,enum=EUR,enum=GBP,enum=USD"`
	Decimals int     `json:"decimals,omitempty" jsonschema:"description=Digits after the point (default 2),minimum=0,maximum=4"`
}

// Convert converts between currencies at fixed rates. It implements
// toolsys.Typed[ConvertParams] and toolsys.Prechecker[ConvertParams].
type Convert struct {
	// perEUR is how much of each currency one euro buys.
	perEUR map[string]float64
}

// Name is the tool's name as the model calls it.
func (Convert) Name() string { return "convert" }

// Description tells the model what the tool does and when to use it.
func (Convert) Description() string {
	return "Converts an amount of money from one currency to another at today's rate."
}

// Permission is what the permission pipeline checks: converting reads
// nothing and changes nothing.
func (Convert) Permission() toolsys.Permission { return toolsys.PermNone }

// SecretParams names the parameters that may carry secrets: none.
func (Convert) SecretParams() []string { return nil }

// Precheck rejects what the schema cannot express. Its error becomes an
// error result the model reads.
func (Convert) Precheck(p ConvertParams) error {
	if p.From == p.To {
		return fmt.Errorf("from and to are both %s: nothing to convert", p.From)
	}
	return nil
}

// Execute runs a call whose arguments passed validation.
func (c Convert) Execute(_ context.Context, p ConvertParams, _ *toolsys.Context) (toolsys.Result, error) {
	decimals := p.Decimals
	if decimals == 0 {
		decimals = 2
	}
	scale := math.Pow(10, float64(decimals))
	out := math.Round(p.Amount/c.perEUR[p.From]*c.perEUR[p.To]*scale) / scale
	return toolsys.Result{
		Content:  fmt.Sprintf("%.*f %s = %.*f %s", decimals, p.Amount, p.From, decimals, out, p.To),
		Metadata: map[string]any{"rate": c.perEUR[p.To] / c.perEUR[p.From]},
	}, nil
}

func run(ctx context.Context, out io.Writer) (err error) {
	// 1. Register the tool. RegisterTyped bridges it into a toolsys.Tool:
	// the schema is reflected and its validator compiled here, once.
	reg := toolsys.NewRegistry(toolsys.Config{})
	tool := Convert{perEUR: map[string]float64{"EUR": 1, "USD": 1.09, "GBP": 0.85}}
	if err := toolsys.RegisterTyped[ConvertParams](reg, tool, toolsys.WithCategory("finance")); err != nil {
		return err
	}

	// 2. The schema the model sees: no $ref, $defs, $schema or title, and
	// unknown properties refused.
	registered, _ := reg.Get("convert")
	var schema bytes.Buffer
	if err := json.Indent(&schema, registered.Schema(), "  ", "  "); err != nil {
		return err
	}
	fmt.Fprintf(out, "== the schema of %q, reflected from ConvertParams\n  %s\n", registered.Name(), schema.String())

	// 3. Bad arguments never reach Execute: each becomes an error result
	// that names the field, for the model to correct its call.
	fmt.Fprintln(out, "\n== calls straight through the registry")
	for _, args := range []string{
		`{"amount": 120, "from": "EUR", "to": "USD"}`,
		`{"amount": "120", "from": "EUR", "to": "USD"}`,
		`{"amount": 120, "from": "EUR", "to": "YEN"}`,
		`{"amount": 120, "from": "EUR"}`,
		`{"amount": 120, "from": "EUR", "to": "USD", "fee": 2}`,
		`{"amount": 120, "from": "EUR", "to": "EUR"}`,
	} {
		res, err := reg.Call(ctx, "convert", json.RawMessage(args), nil)
		if err != nil {
			return err
		}
		mark := "ok   "
		if res.IsError {
			mark = "error"
		}
		fmt.Fprintf(out, "  %s\n    %s %s\n", args, mark, res.Content)
	}

	// 4. A scripted model calls the tool in a session. Its first call names
	// a currency the schema does not allow; it reads the error and retries.
	model, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
			ToolCalls: []scripted.ToolCall{{Name: "convert", Arguments: `{"amount":120,"from":"EUR","to":"DOLLARS"}`}},
		}},
		{Match: scripted.Match{Tool: "convert", Contains: "invalid arguments"}, Reply: scripted.Reply{
			Text:      "The currency must be an ISO code; retrying with USD.",
			ToolCalls: []scripted.ToolCall{{Name: "convert", Arguments: `{"amount":120,"from":"EUR","to":"USD"}`}},
		}},
		{Match: scripted.Match{Tool: "convert"}, Reply: scripted.Reply{Text: "120 euros are 130.80 US dollars at today's rate."}},
	}}, scripted.Options{})
	if err != nil {
		return err
	}
	rt, err := actors.NewInMemory(actors.Config{Provider: model, Tools: reg})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Shutdown(context.WithoutCancel(ctx))) }()
	sess, err := rt.Open(ctx, "typed-tool")
	if err != nil {
		return err
	}
	const question = "How much is 120 EUR in dollars?"
	fmt.Fprintf(out, "\n== a session\n  user:      %s\n", question)
	for ev, err := range sess.Stream(ctx, messages.UserText(question)) {
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case messages.ToolStarted:
			fmt.Fprintf(out, "  call:      %s %s\n", e.Name, e.Arguments)
		case messages.ToolFinished:
			status := "result:   "
			if e.IsError {
				status = "error:    "
			}
			fmt.Fprintf(out, "  %s %s\n", status, e.Content)
		case messages.TurnEnded:
			fmt.Fprintf(out, "  assistant: %s\n  (%s after %d model calls)\n", e.Text, e.Outcome, e.RoundTrips)
		}
	}

	st, _ := reg.Stats("convert")
	fmt.Fprintf(out, "\n== statistics of convert: %d calls, %d errors\n", st.Calls, st.Errors)
	return nil
}
