// Command typed-output shows how to get an agent's final answer as a Go
// value.
//
// A struct is the answer's JSON Schema (reflected once from its json and
// jsonschema tags, as a typed tool's parameters are) and its parser.
// actors.SubmitAs asks the model for it, as response_format json_schema,
// or, for models that cannot do JSON-schema output, through an answer tool
// whose parameters are the struct. The program extracts an invoice record
// from a document with a scripted model: its first answer has a date in
// the wrong format, it is told which field is wrong and corrects itself.
// Then the same extraction runs through the answer tool, a resubmitted
// turn returns the journaled record without asking the model again, and a
// document without an invoice ends with an *actors.OutputError carrying
// the model's raw answer.
//
// Run it with:
//
//	go run ./examples/typed-output
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
		fmt.Fprintln(os.Stderr, "typed-output:", err)
		os.Exit(1)
	}
}

// Invoice is the record the agent extracts. A plain field is required;
// omitempty makes it optional.
type Invoice struct {
	Number   string  `json:"number" jsonschema:"description=The invoice number as printed"`
	Vendor   string  `json:"vendor" jsonschema:"description=Who issued the invoice"`
	Issued   string  `json:"issued" jsonschema:"description=Issue date as YYYY-MM-DD,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
	Currency string  `json:"currency" jsonschema:"enum=EUR,enum=GBP,enum=USD"`
	Lines    []Line  `json:"lines" jsonschema:"minItems=1"`
	Total    float64 `json:"total" jsonschema:"minimum=0"`
	Order    string  `json:"order,omitempty" jsonschema:"description=The buyer's purchase order number, if the invoice names one"`
}

// Line is one line of an invoice.
type Line struct {
	Item   string  `json:"item"`
	Amount float64 `json:"amount"`
}

const document = `INVOICE No. 2026-0142
Nordlicht Studio GmbH, Hamburg
Date: 14 March 2026

  Logo design ............ 1,200.00 EUR
  Two revision rounds ....   300.00 EUR
  Total due .............. 1,500.00 EUR
`

const (
	badDate = `{"number":"2026-0142","vendor":"Nordlicht Studio GmbH","issued":"14 March 2026","currency":"EUR",` +
		`"lines":[{"item":"Logo design","amount":1200},{"item":"Two revision rounds","amount":300}],"total":1500,"order":null}`
	record = `{"number":"2026-0142","vendor":"Nordlicht Studio GmbH","issued":"2026-03-14","currency":"EUR",` +
		`"lines":[{"item":"Logo design","amount":1200},{"item":"Two revision rounds","amount":300}],"total":1500,"order":null}`
)

// script is the scripted model: a first answer with the date as printed,
// the record once told the problem, and prose for a document without an
// invoice.
func script() scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Contains: `field "issued"`}, Reply: scripted.Reply{Text: record}},
		{Match: scripted.Match{Contains: "INVOICE"}, Reply: scripted.Reply{Text: badDate}},
		{Match: scripted.Match{Regexp: "Lunch|not valid JSON"}, Reply: scripted.Reply{Text: "This document is a lunch menu; it holds no invoice."}},
	}}
}

// answerToolScript is a model that ends its turn by calling the answer
// tool.
func answerToolScript() scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{
		ToolCalls: []scripted.ToolCall{{Name: messages.AnswerTool, Arguments: record}},
	}}}}
}

func run(ctx context.Context, out io.Writer) (err error) {
	// 1. The schema the model is sent: reflected from Invoice, normalised,
	// in the strict form (every property listed, optional ones nullable).
	schema, err := toolsys.ReflectSchema[Invoice]()
	if err != nil {
		return err
	}
	strict, err := toolsys.StrictSchema(schema)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, strict, "  ", "  "); err != nil {
		return err
	}
	fmt.Fprintf(out, "== the schema sent for Invoice\n  %s\n", pretty.String())

	// 2. response_format json_schema: the first answer is sent back with
	// the field that is wrong, and the corrected one is decoded.
	model, err := scripted.New(script(), scripted.Options{})
	if err != nil {
		return err
	}
	rt, err := actors.NewInMemory(actors.Config{Provider: model})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Shutdown(context.WithoutCancel(ctx))) }()
	sess, err := rt.Open(ctx, "extract")
	if err != nil {
		return err
	}
	prompt := messages.UserText("Extract the invoice from this document:\n\n" + document)
	fmt.Fprintln(out, "\n== response_format json_schema")
	ts := actors.StreamAs[Invoice](ctx, sess, prompt, actors.WithTurnID("invoice-0142"))
	for ev, err := range ts.Events() {
		if err != nil {
			return err
		}
		if e, ok := ev.(messages.ErrorEvent); ok {
			fmt.Fprintf(out, "  sent back: %s\n", e.Message)
		}
	}
	inv, res, err := ts.Result()
	if err != nil {
		return err
	}
	printInvoice(out, inv)
	fmt.Fprintf(out, "  (%s after %d model calls)\n", res.Outcome, res.RoundTrips)

	// 3. A resubmission of the turn id returns the journaled record; the
	// model is not asked again.
	calls := model.Calls()
	again, _, err := actors.SubmitAs[Invoice](ctx, sess, prompt, actors.WithTurnID("invoice-0142"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== the same turn id again\n  number %s issued %s, model calls made: %d\n", again.Number, again.Issued, model.Calls()-calls)

	// 4. A document without an invoice: the prose answer is sent back
	// once, then the turn fails with an *actors.OutputError.
	fmt.Fprintln(out, "\n== a document without an invoice")
	_, _, err = actors.SubmitAs[Invoice](ctx, sess, messages.UserText("Extract the invoice from this document:\n\nLunch menu: soup, bread."))
	var oe *actors.OutputError
	if !errors.As(err, &oe) {
		return fmt.Errorf("want an *actors.OutputError, got %v", err)
	}
	fmt.Fprintf(out, "  error: %s\n  raw answer: %s\n", oe.Problem, oe.Raw)

	// 5. A model without JSON-schema output: its agent is configured for
	// the answer tool (Config.StructuredOutput does it per provider), and
	// the model ends its turn by calling it.
	toolModel, err := scripted.New(answerToolScript(), scripted.Options{})
	if err != nil {
		return err
	}
	rt2, err := actors.NewInMemory(actors.Config{Provider: toolModel,
		Agents: []actors.AgentProfile{{Name: "extractor", Output: messages.OutputAnswerTool}}})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt2.Shutdown(context.WithoutCancel(ctx))) }()
	sess2, err := rt2.Open(ctx, "extract")
	if err != nil {
		return err
	}
	inv, res, err = actors.SubmitAs[Invoice](ctx, sess2, prompt)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "\n== the answer tool")
	printInvoice(out, inv)
	fmt.Fprintf(out, "  (%s after %d model call)\n", res.Outcome, res.RoundTrips)
	return nil
}

func printInvoice(out io.Writer, inv Invoice) {
	fmt.Fprintf(out, "  invoice %s from %s, issued %s\n", inv.Number, inv.Vendor, inv.Issued)
	for _, l := range inv.Lines {
		fmt.Fprintf(out, "    %-22s %9.2f %s\n", l.Item, l.Amount, inv.Currency)
	}
	fmt.Fprintf(out, "    %-22s %9.2f %s\n", "total", inv.Total, inv.Currency)
}
