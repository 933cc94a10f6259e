package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// parallelSpawnScript: "go" calls gate twice and spawn_agent once in one
// reply; the sub-agent answers its task at once; the parent then answers
// "summary".
func parallelSpawnScript() scripted.Script {
	return scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Exact: "go"}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{
			{Name: "gate", Arguments: "{}"}, {Name: "gate", Arguments: "{}"}, spawnCall("research the topic"),
		}, Usage: usage15}},
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "research"}, Reply: scripted.Reply{Text: "found it", Usage: usage15}},
		{Match: scripted.Match{Tool: actors.SpawnAgentToolName}, Reply: scripted.Reply{Text: "summary", Usage: usage15}},
	}}
}

// tracedFixture is a fixture whose runtime records spans in memory and
// metrics in a manual reader.
func tracedFixture(t *testing.T, script scripted.Script, tools []toolsys.Tool, mod func(*actors.Config)) (*fixture, *tracetest.InMemoryExporter, *sdkmetric.ManualReader) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	f := newFixture(t, script, tools, func(c *actors.Config) {
		c.TracerProvider, c.MeterProvider = tp, mp
		if mod != nil {
			mod(c)
		}
	})
	return f, exp, reader
}

func attr(s tracetest.SpanStub, key string) attribute.Value {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// TestTelemetry_SpanTree runs a turn whose reply calls two tools in
// parallel and spawns a sub-agent, and checks the tree of its spans: the
// turn's invoke_agent holds its chat spans and one execute_tool per call,
// the two gate calls overlap, and the sub-agent's invoke_agent (with its
// own chat) is a child of the spawn_agent call. The turn's ids are
// journaled with its user message.
func TestTelemetry_SpanTree(t *testing.T) {
	gate := newBarrier(2) // returns only once both calls are inside it
	f, exp, _ := tracedFixture(t, parallelSpawnScript(), []toolsys.Tool{gate.tool()}, func(c *actors.Config) {
		c.SubAgents = actors.SubAgents{Enabled: true}
	})
	evs := collect(t, f.sess, "go")
	if end := eventsOf[messages.TurnEnded](evs); len(end) != 1 || end[0].Text != "summary" {
		t.Fatalf("turn ended with %+v", end)
	}
	spans := exp.GetSpans()
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	children := func(parent tracetest.SpanStub) []string {
		var names []string
		for _, s := range spans {
			if s.Parent.SpanID() == parent.SpanContext.SpanID() && s.Parent.IsValid() {
				names = append(names, s.Name)
			}
		}
		slices.Sort(names)
		return names
	}
	var root, spawn, sub tracetest.SpanStub
	var gates []tracetest.SpanStub
	for _, s := range spans {
		switch {
		case s.Name == "invoke_agent default":
			root = s
		case s.Name == "invoke_agent subagent":
			sub = s
		case s.Name == "execute_tool "+actors.SpawnAgentToolName:
			spawn = s
		case s.Name == "execute_tool gate":
			gates = append(gates, s)
		}
	}
	if !root.SpanContext.IsValid() || root.Parent.IsValid() {
		t.Fatalf("no root invoke_agent span among %d spans: %+v", len(spans), names(spans))
	}
	want := []string{"chat", "chat", "execute_tool gate", "execute_tool gate", "execute_tool " + actors.SpawnAgentToolName}
	if got := children(root); !slices.Equal(got, want) {
		t.Errorf("children of the turn = %q, want %q", got, want)
	}
	if sub.Parent.SpanID() != spawn.SpanContext.SpanID() || sub.SpanContext.TraceID() != root.SpanContext.TraceID() {
		t.Errorf("sub-agent turn's parent = %s, want the spawn_agent call %s", sub.Parent.SpanID(), spawn.SpanContext.SpanID())
	}
	if got := children(sub); !slices.Equal(got, []string{"chat"}) {
		t.Errorf("children of the sub-agent turn = %q", got)
	}
	if len(gates) != 2 || !gates[0].StartTime.Before(gates[1].EndTime) || !gates[1].StartTime.Before(gates[0].EndTime) {
		t.Errorf("the gate calls do not overlap: %+v", gates)
	}
	for _, tt := range []struct {
		span tracetest.SpanStub
		key  string
		want any
	}{
		{root, "gen_ai.operation.name", "invoke_agent"},
		{root, "gen_ai.conversation.id", "s1"},
		{root, "agcore.turn.outcome", "completed"},
		{root, "gen_ai.usage.input_tokens", int64(20)},
		{sub, "gen_ai.agent.name", "subagent"},
		{spawn, "agcore.tool.source", "runtime"},
		{gates[0], "gen_ai.tool.name", "gate"},
		{gates[0], "agcore.tool.source", "builtin"},
		{gates[0], "agcore.tool.is_error", false},
	} {
		if got := attr(tt.span, tt.key).AsInterface(); got != tt.want {
			t.Errorf("%s %s = %v, want %v", tt.span.Name, tt.key, got, tt.want)
		}
	}
	for _, s := range spans {
		if s.Name != "chat" {
			continue
		}
		if attr(s, "gen_ai.provider.name").AsString() == "" || attr(s, "gen_ai.response.model").AsString() != "scripted" ||
			!slices.Equal(attr(s, "gen_ai.response.finish_reasons").AsStringSlice()[:1], attr(s, "gen_ai.response.finish_reasons").AsStringSlice()) {
			t.Errorf("chat span attributes: %v", s.Attributes)
		}
		if attr(s, "gen_ai.input.messages").Type() != attribute.INVALID {
			t.Errorf("chat span records the prompt without TraceContent")
		}
	}
	var um messages.UserMessage
	for e, err := range f.rt.Journal().Read(t.Context(), "s1", 1) {
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := e.Event.(messages.UserMessage); ok {
			um = m
		}
	}
	if um.TraceID != root.SpanContext.TraceID().String() || um.SpanID != root.SpanContext.SpanID().String() {
		t.Errorf("journaled ids %s/%s, want the turn's %s/%s", um.TraceID, um.SpanID, root.SpanContext.TraceID(), root.SpanContext.SpanID())
	}
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

// TestTelemetry_ContentOptIn records prompts and tool results only with
// TraceContent, and then masks a secret the redactor knows.
func TestTelemetry_ContentOptIn(t *testing.T) {
	const secret = "sk-live-0123456789abcdef0123456789"
	script := scripted.Script{Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "leak", Arguments: "{}"}}}},
		{Match: scripted.Match{Tool: "leak"}, Reply: scripted.Reply{Text: "done"}},
	}}
	leak := &funcTool{name: "leak", perm: toolsys.PermReadOnly, fn: func(context.Context, json.RawMessage) (toolsys.Result, error) {
		return toolsys.Result{Content: "the key is " + secret}, nil
	}}
	for _, on := range []bool{false, true} {
		f, exp, _ := tracedFixture(t, script, []toolsys.Tool{leak}, func(c *actors.Config) { c.TraceContent = on })
		f.rt.Redactor().Add(secret, "[REDACTED]")
		collect(t, f.sess, "please use "+secret)
		var prompt, result string
		for _, s := range exp.GetSpans() {
			if v := attr(s, "gen_ai.input.messages"); v.Type() == attribute.STRING && prompt == "" {
				prompt = v.AsString()
			}
			if v := attr(s, "gen_ai.tool.call.result"); v.Type() == attribute.STRING {
				result = v.AsString()
			}
		}
		if !on {
			if prompt != "" || result != "" {
				t.Errorf("without TraceContent: prompt %q, result %q recorded", prompt, result)
			}
			continue
		}
		if !strings.Contains(prompt, "please use") || !strings.Contains(result, "the key is") {
			t.Errorf("with TraceContent: prompt %q, result %q", prompt, result)
		}
		if strings.Contains(prompt+result, secret) {
			t.Errorf("the secret reached a span: prompt %q, result %q", prompt, result)
		}
	}
}

// TestTelemetry_ResumeLinks resumes a turn a crash left open: its span
// links to the span the journal names.
func TestTelemetry_ResumeLinks(t *testing.T) {
	store, err := memory.Open(memory.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	const traceID, spanID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	w := newJournalWriter(t, store)
	w.write("s1", messages.UserMessage{TurnID: "t1", Turn: 0, Message: messages.UserText("hello"), TraceID: traceID, SpanID: spanID})
	w.close()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prov, err := scripted.New(scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "hi"}}}}, scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := actors.New(actors.Config{Store: store, Provider: prov, TracerProvider: tp, Durability: memory.DurabilityNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	sess, err := rt.Open(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := sess.Submit(t.Context(), messages.UserText("hello"), actors.WithTurnID("t1")); err != nil || res.Turn != 0 {
		t.Fatalf("resumed turn = %+v, %v", res, err)
	}
	for _, s := range exp.GetSpans() {
		if s.Name != "invoke_agent default" {
			continue
		}
		if len(s.Links) != 1 || s.Links[0].SpanContext.TraceID().String() != traceID || s.Links[0].SpanContext.SpanID().String() != spanID {
			t.Fatalf("resumed turn's links = %+v", s.Links)
		}
		return
	}
	t.Fatalf("no turn span among %q", names(exp.GetSpans()))
}

// TestTelemetry_Metrics reads the metrics of a turn with two tool calls
// from the MeterProvider.
func TestTelemetry_Metrics(t *testing.T) {
	gate := newBarrier(2)
	f, _, reader := tracedFixture(t, parallelSpawnScript(), []toolsys.Tool{gate.tool()}, func(c *actors.Config) {
		c.SubAgents = actors.SubAgents{Enabled: true}
	})
	collect(t, f.sess, "go")
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					sums[m.Name+labels(p.Attributes)] += p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					sums[m.Name] = p.Value
				}
			}
		}
	}
	for key, want := range map[string]int64{
		"agcore.turns{outcome=completed}":                    2, // the turn and the sub-agent's task
		"agcore.tool.calls{source=builtin,tool=gate}":        2,
		"agcore.tool.errors{source=builtin,tool=gate}":       0,
		"agcore.tool.calls{source=runtime,tool=spawn_agent}": 1,
		"agcore.model.calls{model=scripted}":                 3,
		"agcore.tokens{kind=prompt,model=scripted}":          30,
	} {
		if got, ok := sums[key]; !ok || got != want {
			t.Errorf("%s = %d (present %v), want %d", key, got, ok, want)
		}
	}
	// s1 at least; the sub-agent's actor may still be stopping.
	if got := sums["agcore.sessions.active"]; got < 1 {
		t.Errorf("agcore.sessions.active = %d, want at least 1", got)
	}
}

func labels(s attribute.Set) string {
	if s.Len() == 0 {
		return ""
	}
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestTelemetry_Restarts counts a session restarted by its supervisor.
func TestTelemetry_Restarts(t *testing.T) {
	f, _, reader := tracedFixture(t, scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}}}}, nil, nil)
	before, err := f.sess.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.sess.Fault(errors.New("bug in the session")); err != nil {
		t.Fatal(err)
	}
	// Status answers from the restarted actor.
	if after, err := f.sess.Status(t.Context()); err != nil || after.Activation != before.Activation+1 {
		t.Fatalf("after the fault: %+v, %v", after, err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "agcore.restarts" {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if v, _ := p.Attributes.Value("supervisor"); v.AsString() == "session" && p.Value == 1 {
					return
				}
			}
			t.Fatalf("agcore.restarts = %+v", m.Data)
		}
	}
	t.Fatal("no agcore.restarts metric after a restart")
}
