package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/openai"
	"github.com/agcore/agcore/providers/scripted"
)

// roundTrip is one way of making a chat call against the mock server.
type roundTrip struct {
	chat   func(ctx context.Context) error
	stream func(ctx context.Context) error
}

// benchClients starts one mock server and returns a bare go-openai client
// and the agcore provider in front of it, sharing one tuned http.Client.
func benchClients(b *testing.B) (bare, agcore roundTrip) {
	b.Helper()
	model := scripted.MustNew(scripted.Script{Stateless: true, Rules: []scripted.Rule{{
		Match: scripted.Match{Any: true},
		Reply: scripted.Reply{
			Text:      strings.Repeat("The quick brown fox jumps over the lazy dog. ", 6),
			ToolCalls: []scripted.ToolCall{{Name: "read_file", Arguments: `{"path":"README.md"}`}, {Name: "list_dir", Arguments: `{"path":"."}`}},
		},
	}}}, scripted.Options{ChunkSize: 16})
	srv := startMock(b, model)

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost, tr.IdleConnTimeout = 256, 64, 90*time.Second
	hc := &http.Client{Transport: tr}
	b.Cleanup(tr.CloseIdleConnections)

	conv := []messages.Message{messages.SystemText("You are terse."), messages.UserText("Read the README and list the directory.")}
	tools := []messages.ToolDefinition{
		{Name: "read_file", Description: "Read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "list_dir", Description: "List a directory", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	}

	cfg := oai.DefaultConfig(mockKey)
	cfg.BaseURL = srv.URL()
	cfg.HTTPClient = hc
	client := oai.NewClientWithConfig(cfg)
	bareReq := oai.ChatCompletionRequest{Model: "scripted", Messages: []oai.ChatCompletionMessage{
		{Role: "system", Content: conv[0].Text()}, {Role: "user", Content: conv[1].Text()},
	}}
	for _, t := range tools {
		bareReq.Tools = append(bareReq.Tools, oai.Tool{Type: oai.ToolTypeFunction, Function: &oai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	bare.chat = func(ctx context.Context) error {
		resp, err := client.CreateChatCompletion(ctx, bareReq)
		if err == nil && len(resp.Choices[0].Message.ToolCalls) != 2 {
			err = errors.New("bare: wrong reply")
		}
		return err
	}
	streamReq := bareReq
	streamReq.Stream = true
	streamReq.StreamOptions = &oai.StreamOptions{IncludeUsage: true}
	bare.stream = func(ctx context.Context) error {
		st, err := client.CreateChatCompletionStream(ctx, streamReq)
		if err != nil {
			return err
		}
		defer st.Close()
		var text strings.Builder
		args := map[int]*strings.Builder{}
		for {
			ev, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			for _, ch := range ev.Choices {
				text.WriteString(ch.Delta.Content)
				for _, tc := range ch.Delta.ToolCalls {
					if args[*tc.Index] == nil {
						args[*tc.Index] = &strings.Builder{}
					}
					args[*tc.Index].WriteString(tc.Function.Arguments)
				}
			}
		}
		if len(args) != 2 || text.Len() == 0 {
			return errors.New("bare: wrong stream")
		}
		return nil
	}

	p, err := openai.New(openai.Options{BaseURL: srv.URL(), APIKey: mockKey, Model: "scripted", HTTPClient: hc})
	if err != nil {
		b.Fatal(err)
	}
	req := messages.Request{Messages: conv, Tools: tools}
	agcore.chat = func(ctx context.Context) error {
		resp, err := p.Chat(ctx, req)
		if err == nil && len(resp.Message.ToolCalls) != 2 {
			err = errors.New("agcore: wrong reply")
		}
		return err
	}
	agcore.stream = func(ctx context.Context) error {
		st, err := p.Stream(ctx, req)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, err := range providers.Chunks(st) {
			if err != nil {
				return err
			}
		}
		if len(st.Response().Message.ToolCalls) != 2 {
			return errors.New("agcore: wrong stream")
		}
		return nil
	}
	return bare, agcore
}

// BenchmarkRoundTrip times a chat round trip through the mock server with a
// bare go-openai client and with the agcore openai provider.
func BenchmarkRoundTrip(b *testing.B) {
	bare, agcore := benchClients(b)
	for _, c := range []struct {
		name string
		rt   roundTrip
	}{{"bare-go-openai", bare}, {"agcore-openai", agcore}} {
		for _, mode := range []string{"chat", "stream"} {
			call := c.rt.chat
			if mode == "stream" {
				call = c.rt.stream
			}
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				for b.Loop() {
					if err := call(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkOverheadRatio alternates bare and agcore round trips against the
// same server and reports the median of agcore's time over the bare
// client's, pair by pair, as "ratio" (1.05 means 5 % overhead).
func BenchmarkOverheadRatio(b *testing.B) {
	bare, agcore := benchClients(b)
	for _, mode := range []string{"chat", "stream"} {
		b.Run(mode, func(b *testing.B) {
			bareCall, agcoreCall := bare.chat, agcore.chat
			if mode == "stream" {
				bareCall, agcoreCall = bare.stream, agcore.stream
			}
			var bareTime, agcoreTime time.Duration
			var ratios []float64
			timed := func(call func(context.Context) error) time.Duration {
				start := time.Now()
				if err := call(b.Context()); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			for i := 0; b.Loop(); i++ {
				var tb, ta time.Duration
				if i%2 == 0 { // alternate the order so neither side always goes first
					tb = timed(bareCall)
					ta = timed(agcoreCall)
				} else {
					ta = timed(agcoreCall)
					tb = timed(bareCall)
				}
				bareTime += tb
				agcoreTime += ta
				ratios = append(ratios, float64(ta)/float64(tb))
			}
			// The median of the pairwise ratios shrugs off pauses that hit
			// one side of a pair (GC, a busy machine); the means are shown too.
			slices.Sort(ratios)
			n := float64(b.N)
			b.ReportMetric(ratios[len(ratios)/2], "ratio")
			b.ReportMetric(float64(bareTime.Nanoseconds())/n, "bare-ns/op")
			b.ReportMetric(float64(agcoreTime.Nanoseconds())/n, "agcore-ns/op")
		})
	}
}
