package wasm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/wasm"
)

func TestLoad_DescribesTheToolFromItsHelp(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	tool := load(t, rt, "codec")
	if tool.Name() != "codec" || tool.Description() != "Encodes text as base64 or hex, or decodes it back." ||
		tool.Permission() != toolsys.PermNone || !tool.Idempotent() || len(tool.SecretParams()) != 0 {
		t.Errorf("tool = %s %q %s idempotent=%v secrets=%v", tool.Name(), tool.Description(), tool.Permission(), tool.Idempotent(), tool.SecretParams())
	}
	want := `{"additionalProperties":false,"properties":{` +
		`"alphabet":{"default":"base64","description":"the encoding to use","enum":["base64","hex"],"type":"string"},` +
		`"input":{"description":"the text to transform","type":"string"},` +
		`"mode":{"description":"encode or decode the input","enum":["encode","decode"],"type":"string"}},` +
		`"required":["mode","input"],"type":"object"}`
	if diff := cmp.Diff(want, string(tool.Schema())); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	normalized, err := toolsys.NormalizeSchema(tool.Schema())
	if err != nil || string(normalized) != string(tool.Schema()) {
		t.Errorf("the schema is not in normal form: %s, %v", normalized, err)
	}
}

func TestTool_CallsThroughTheRegistry(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	reg := openRegistry(t, nil)
	reg.MustRegister(load(t, rt, "codec"), toolsys.WithSource(toolsys.SourceWASM))
	tests := []struct {
		name, args, want string
		isError          bool
	}{
		{"encode", `{"mode":"encode","input":"hi"}`, "aGk=", false},
		{"decode", `{"mode":"decode","input":"aGk="}`, "hi", false},
		{"hex", `{"mode":"encode","input":"hi","alphabet":"hex"}`, "6869", false},
		{"empty optional dropped", `{"mode":"encode","input":"hi","alphabet":""}`, "aGk=", false},
		{"tool failure", `{"mode":"decode","input":"%%%"}`, "tool codec exited with status 1: codec: illegal base64 data", true},
		{"enum", `{"mode":"rot13","input":"hi"}`, `invalid arguments for tool codec: field "mode": must be one of ["encode","decode"], got "rot13"`, true},
		{"missing", `{"mode":"encode"}`, `field "input": is required but missing`, true},
		{"unknown", `{"mode":"encode","input":"hi","extra":1}`, `unknown field "extra"`, true},
		{"type", `{"mode":"encode","input":7}`, `field "input": expected string, got number 7`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := reg.Call(t.Context(), "codec", json.RawMessage(tt.args), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isError || !strings.Contains(res.Content, tt.want) {
				t.Errorf("Call(%s) = %+v, want IsError=%v and content containing %q", tt.args, res, tt.isError, tt.want)
			}
		})
	}
	if st, _ := reg.Stats("codec"); st.Source != toolsys.SourceWASM || st.Calls != int64(len(tests)) || st.Errors != 5 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestTool_InvalidArgumentsNeverRun(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	ws := workspace(t)
	tool := load(t, rt, "escape_write")
	res, err := tool.Execute(t.Context(), json.RawMessage(`{"write":["ran.txt"],"bogus":true}`), &toolsys.Context{Workspace: ws})
	if err != nil || !res.IsError || !strings.Contains(res.Content, `unknown field "bogus"`) {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	if _, err := ws.FS().Stat("ran.txt"); err == nil {
		t.Error("the tool ran although its arguments were invalid: ran.txt exists")
	}
}

func TestTool_ArgumentsEnvironmentAndJSONResult(t *testing.T) {
	t.Setenv("AGCORE_WASM_TEST_HOST_VAR", "must not reach the tool")
	rt := newRuntime(t, wasm.Config{})
	reg := openRegistry(t, toolsys.MapSecrets{"TOKEN": "s3cr3t-value"})
	reg.MustRegister(load(t, rt, "meta"), toolsys.WithSource(toolsys.SourceWASM))

	res, err := reg.Call(t.Context(), "meta", json.RawMessage(
		`{"text":"hi","token":"<secret_ref:TOKEN>","tag":["a","b c"],"count":2,"ratio":0.5,"loud":true,"fail":false}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Content != "HIHI" {
		t.Errorf("result = %+v, want content HIHI", res)
	}
	argv := []any{"--text", "hi", "--token", "<secret_ref:TOKEN>", "--tag", "a", "--tag", "b c", "--count", "2", "--ratio", "0.5", "--loud"}
	if diff := cmp.Diff(argv, res.Metadata["argv"]); diff != "" {
		t.Errorf("command line (-want +got; the secret comes back masked):\n%s", diff)
	}
	if got := res.Metadata["token_len"]; got != json.Number("12") {
		t.Errorf("token_len = %v, want 12: the tool did not receive the secret's value", got)
	}
	if diff := cmp.Diff([]any{"GREETING=hello world"}, res.Metadata["env"]); diff != "" {
		t.Errorf("environment (-want +got): only the declared variables reach the tool\n%s", diff)
	}
	if b, _ := json.Marshal(res); strings.Contains(string(b), "s3cr3t-value") {
		t.Errorf("the secret's value leaked into the result: %s", b)
	}

	res, _ = reg.Call(t.Context(), "meta", json.RawMessage(`{"text":"<secret_ref:TOKEN>"}`), nil)
	if !res.IsError || !strings.Contains(res.Content, `field "text"`) || !strings.Contains(res.Content, "not allowed") {
		t.Errorf("a placeholder outside the secret parameter = %+v, want a refusal naming the field", res)
	}

	res, _ = reg.Call(t.Context(), "meta", json.RawMessage(`{"text":"oops","fail":true}`), nil)
	if !res.IsError || res.Content != "oops" || res.Metadata["argv"] == nil {
		t.Errorf(`"error": true = %+v, want IsError with the content and the metadata`, res)
	}
	res, _ = reg.Call(t.Context(), "meta", json.RawMessage(`{"text":"plain","plain":true}`), nil)
	if res.IsError || res.Content != "plain" || res.Metadata != nil {
		t.Errorf("plain output = %+v, want the text as content", res)
	}
}

func TestTool_FailuresBecomeErrorResults(t *testing.T) {
	rt := newRuntime(t, wasm.Config{Timeout: 2 * time.Second, MemoryLimitPages: 512})
	reg := openRegistry(t, nil)
	for _, name := range []string{"crash", "loop", "hog"} {
		reg.MustRegister(load(t, rt, name), toolsys.WithSource(toolsys.SourceWASM))
	}
	tests := []struct {
		name, tool, args string
		want             []string
	}{
		{"panic", "crash", `{"how":"panic"}`, []string{"tool crash exited with status 2", "panic: crash asked to panic"}},
		{"trap", "crash", `{"how":"trap"}`, []string{"tool crash trapped: wasm error: out of bounds memory access"}},
		{"exit", "crash", `{"how":"exit"}`, []string{"tool crash exited with status 3: crash: exiting with status 3"}},
		{"loop", "loop", `{}`, []string{"tool loop did not finish within 2s and was stopped"}},
		{"unbounded allocation", "hog", `{}`, []string{"tool hog exited with status 2", "out of memory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := reg.Call(t.Context(), tt.tool, json.RawMessage(tt.args), nil)
			if err != nil {
				t.Fatalf("Call = %v, want an error result", err)
			}
			if !res.IsError {
				t.Fatalf("Call = %+v, want IsError", res)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content %q lacks %q", res.Content, w)
				}
			}
		})
	}
	// The runtime is unharmed: the same tools still run.
	if res, _ := reg.Call(t.Context(), "crash", json.RawMessage(`{"how":"exit"}`), nil); res.Metadata["exit_code"] != uint32(3) {
		t.Errorf("after the failures, crash = %+v", res)
	}
}

func TestTool_CallerContextEndsTheRun(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	tool := load(t, rt, "loop")
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	res, err := tool.Execute(ctx, json.RawMessage(`{}`), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Execute past the caller's deadline = %+v, %v; want an error wrapping context.DeadlineExceeded", res, err)
	}
}

func TestTool_OutputCap(t *testing.T) {
	rt := newRuntime(t, wasm.Config{OutputLimit: 10})
	tool := load(t, rt, "meta")
	res, err := tool.Execute(t.Context(), json.RawMessage(`{"text":"abcdef","count":5,"plain":true}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Content, "abcdefabcd\n\n[... output cut at 10 bytes") || res.Metadata["stdout_truncated"] != true ||
		res.Metadata["stdout_size"] != int64(31) {
		t.Errorf("Execute = %+v, want the first 10 bytes and a note", res)
	}
}

func TestTool_ConcurrentCalls(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	tool := load(t, rt, "codec")
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 16 {
		wg.Go(func() {
			in := strings.Repeat("x", i+1)
			res, err := tool.Execute(context.Background(), json.RawMessage(`{"mode":"encode","input":"`+in+`","alphabet":"hex"}`), nil)
			if err != nil || res.Content != strings.Repeat("78", i+1) {
				errs <- res.Content
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("a concurrent call got %q", e)
	}
}

func TestTool_Close(t *testing.T) {
	rt := newRuntime(t, wasm.Config{})
	tool := load(t, rt, "codec")
	if err := tool.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Execute(t.Context(), json.RawMessage(`{"mode":"encode","input":"hi"}`), nil); !errors.Is(err, wasm.ErrClosed) {
		t.Errorf("Execute after Close = %v, want ErrClosed", err)
	}
}
