package scripted_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/scripted"
)

// A tool round trip: the model calls a tool, then answers from its result.
func ExampleNew() {
	p, err := scripted.New(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Contains: "weather"}, Reply: scripted.Reply{
			ToolCalls: []scripted.ToolCall{{Name: "get_weather", Arguments: `{"city":"Oslo"}`}},
		}},
		{Match: scripted.Match{Tool: "get_weather"}, Reply: scripted.Reply{Text: "It is sunny in Oslo."}},
	}}, scripted.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	conv := []messages.Message{messages.UserText("What is the weather in Oslo?")}

	resp, _ := p.Chat(ctx, messages.Request{Messages: conv})
	call := resp.Message.ToolCalls[0]
	fmt.Println(resp.FinishReason, call.ID, call.Name, call.Arguments)

	conv = append(conv, resp.Message, messages.ToolResultMessage(call.ID, `{"sky":"clear"}`))
	resp, _ = p.Chat(ctx, messages.Request{Messages: conv})
	fmt.Println(resp.FinishReason, resp.Message.Text())
	// Output:
	// tool_calls call_1_1 get_weather {"city":"Oslo"}
	// stop It is sunny in Oslo.
}

// Turns play one after the other; here a rate limit comes first, as a
// *providers.Error that a retry policy understands.
func ExampleRule_turns() {
	p := scripted.MustNew(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Turns: []scripted.Reply{
			{Fail: &scripted.Failure{Kind: scripted.FailRateLimit, RetryAfter: 2 * time.Second}},
			{Text: "Hello!"},
		}},
	}}, scripted.Options{})
	req := messages.Request{Messages: []messages.Message{messages.UserText("hi")}}
	for range 2 {
		resp, err := p.Chat(context.Background(), req)
		if pe, ok := errors.AsType[*providers.Error](err); ok {
			fmt.Println(pe.Kind, pe.Status, pe.RetryAfter, pe.Retryable())
			continue
		}
		fmt.Println(resp.Message.Text())
	}
	// Output:
	// rate limited 429 2s true
	// Hello!
}

// A stream delivers the reply in pieces and assembles it at the end.
func ExampleProvider_Stream() {
	p := scripted.MustNew(scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Any: true}, Reply: scripted.Reply{
			Text:  "Streaming works.",
			Usage: &messages.Usage{PromptTokens: 5, CompletionTokens: 3},
		}},
	}}, scripted.Options{ChunkSize: 5})
	st, _ := p.Stream(context.Background(), messages.Request{Messages: []messages.Message{messages.UserText("go")}})
	defer st.Close()
	for c, err := range providers.Chunks(st) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if c.Text != "" {
			fmt.Printf("%q\n", c.Text)
		}
	}
	resp := st.Response()
	fmt.Println(resp.Message.Text(), resp.FinishReason, resp.Usage.TotalTokens)
	// Output:
	// "Strea"
	// "ming "
	// "works"
	// "."
	// Streaming works. stop 8
}

// Scripts are data: JSON or YAML, with errors that name the rule and field.
func ExampleParseYAML() {
	_, err := scripted.ParseYAML([]byte(`
rules:
  - match: {contains: hello}
    reply: {text: Hi there!}
  - match: {regexp: "(unclosed"}
    reply: {text: never}
`))
	fmt.Println(err)
	// Output:
	// scripted: rules[1].match.regexp: error parsing regexp: missing closing ): `(unclosed`
}

// The demo script lists the workspace, reads two files in parallel, writes
// a summary and answers.
func ExampleDemo() {
	p := scripted.MustNew(scripted.Demo(), scripted.Options{})
	conv := []messages.Message{messages.UserText("Summarise this project.")}
	for {
		resp, err := p.Chat(context.Background(), messages.Request{Messages: conv})
		if err != nil {
			fmt.Println(err)
			return
		}
		conv = append(conv, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			fmt.Println("answer:", resp.Message.Text() != "")
			return
		}
		for _, c := range resp.Message.ToolCalls {
			fmt.Println(c.ID, c.Name)
			conv = append(conv, messages.ToolResultMessage(c.ID, "ok"))
		}
	}
	// Output:
	// call_1_1 list_dir
	// call_2_1 read_file
	// call_2_2 read_file
	// call_3_1 write_file
	// answer: true
}
