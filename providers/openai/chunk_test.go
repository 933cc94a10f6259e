package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// decodeBoth decodes payload with decodeChunk and with encoding/json. ok is
// decodeChunk's answer; when it is true, the two results must agree.
func decodeBoth(t *testing.T, payload []byte) (fast, slow wireChunk, ok bool, slowErr error) {
	t.Helper()
	var seen chunkStrings
	ok = decodeChunk(payload, &fast, &seen)
	slowErr = json.Unmarshal(payload, &slow)
	return fast, slow, ok, slowErr
}

// checkSame fails t unless encoding/json decoded payload without an error
// event into what decodeChunk did.
func checkSame(t *testing.T, payload []byte, fast, slow wireChunk, slowErr error) {
	t.Helper()
	if slowErr != nil {
		t.Fatalf("decodeChunk took %q, which encoding/json refuses: %v", payload, slowErr)
	}
	if len(slow.Error) > 0 && !bytes.Equal(slow.Error, []byte("null")) {
		t.Fatalf("decodeChunk took %q, which holds an error event", payload)
	}
	slow.Error = nil
	if diff := cmp.Diff(slow, fast, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(wireChunk{})); diff != "" {
		t.Fatalf("decodeChunk(%q) differs from encoding/json (-json +decodeChunk):\n%s", payload, diff)
	}
	if diff := cmp.Diff(fromStreamChunk(&slow), fromStreamChunk(&fast), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("chunk of %q differs (-json +decodeChunk):\n%s", payload, diff)
	}
}

// TestDecodeChunk_Takes checks that the usual chunks are decoded by hand,
// and decoded as encoding/json decodes them.
func TestDecodeChunk_Takes(t *testing.T) {
	for _, payload := range []string{
		// As the workload's mock sends them.
		`{"id":"chatcmpl-scripted-94a486c31f4fe58d","object":"chat.completion.chunk","created":1795549539,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1_1","type":"function","function":{"name":"lookup","arguments":""}}]},"finish_reason":null}],"usage":null}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"key\":\""}}]},"finish_reason":null}],"usage":null}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":6,"total_tokens":25,"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":2}}}`,
		// OpenAI's own extras: fingerprints, logprobs, refusals, obfuscation.
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi","refusal":null},"logprobs":null,"finish_reason":null}],"obfuscation":"x1"}`,
		`{"choices":[{"index":0,"delta":{"content":"caf\u00e9 \"quoted\" \\ \/ \b\f\n\r\t","tool_calls":null},"finish_reason":"stop","logprobs":{"content":[{"token":"a","logprob":-0.5e-3,"bytes":[97]}]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"naïve – 日本 🙂"}}]}`,
		` { "id" : "c" , "choices" : [ { "index" : 1 , "delta" : { "content" : null } } ] , "error" : null } `,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":null,"id":null,"function":null},{"index":-0,"function":{"name":null,"arguments":"{}"}}]}}],"usage":{"prompt_tokens":null,"prompt_tokens_details":null}}`,
		`{"choices":null,"usage":null,"model":null,"id":null}`,
		`{}`,
	} {
		fast, slow, ok, slowErr := decodeBoth(t, []byte(payload))
		if !ok {
			t.Errorf("decodeChunk refused %q; want it decoded by hand", payload)
			continue
		}
		checkSame(t, []byte(payload), fast, slow, slowErr)
	}
}

// TestDecodeChunk_Refuses checks that what decodeChunk cannot decode
// exactly as encoding/json does goes to encoding/json: malformed JSON, keys
// that encoding/json would match but for case or through an escape,
// repeated keys, wrong types, numbers an int does not take, surrogates and
// invalid UTF-8 (which encoding/json replaces), and error events.
func TestDecodeChunk_Refuses(t *testing.T) {
	for _, payload := range []string{
		``,
		`null`,
		`[]`,
		`{"choices":[{"delta":{"content":"x"}}]`,
		`{"choices":[]} x`,
		`{"choices":[],}`,
		`{"ID":"c"}`,
		`{"Choices":[]}`,
		`{"\u0069d":"c"}`,
		`{"id":"a","id":"b"}`,
		`{"choices":[{"index":0,"index":1}]}`,
		`{"id":1}`,
		`{"choices":{}}`,
		`{"choices":[{"index":1.0}]}`,
		`{"choices":[{"index":1e2}]}`,
		`{"choices":[{"index":01}]}`,
		`{"choices":[{"index":12345678901234567890}]}`,
		`{"choices":[{"delta":{"content":"\ud83d\ude42"}}]}`,
		"{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"a\tb\"}}]}",
		`{"choices":[{"delta":{"content":"\x"}}]}`,
		`{"choices":[null]}`,
		`{"error":{"message":"overloaded"}}`,
		`{"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		`{"x":tru}`,
		`{"x":-}`,
		`{"x":1.}`,
		`{"x":1e}`,
	} {
		if _, _, ok, _ := decodeBoth(t, []byte(payload)); ok {
			t.Errorf("decodeChunk took %q; want it left to encoding/json", payload)
		}
	}
}

// TestDecodeChunk_UsageAllocatesNothing checks that the usage of a reply's
// last chunk is read into the room the stream's chunk keeps for it.
func TestDecodeChunk_UsageAllocatesNothing(t *testing.T) {
	var seen chunkStrings
	var w wireChunk
	payload := []byte(`{"id":"c","model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,` +
		`"prompt_tokens_details":{"cached_tokens":1},"completion_tokens_details":{"reasoning_tokens":1}}}`)
	if !decodeChunk(payload, &w, &seen) || w.Usage == nil || w.Usage.TotalTokens != 5 ||
		w.Usage.PromptTokensDetails.CachedTokens != 1 || w.Usage.CompletionTokensDetails.ReasoningTokens != 1 {
		t.Fatalf("usage = %+v", w.Usage)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		w = wireChunk{}
		decodeChunk(payload, &w, &seen)
	}); allocs != 0 && !raceEnabled {
		t.Errorf("a chunk with usage allocated %v times, want 0", allocs)
	}
}

// TestDecodeChunk_SharesRepeatedStrings checks that the chunks of a reply
// that repeat the id and model of the one before share its strings.
func TestDecodeChunk_SharesRepeatedStrings(t *testing.T) {
	var seen chunkStrings
	var a, b wireChunk
	if !decodeChunk([]byte(`{"id":"chatcmpl-1","model":"m1","choices":[]}`), &a, &seen) ||
		!decodeChunk([]byte(`{"id":"chatcmpl-1","model":"m1","choices":[]}`), &b, &seen) {
		t.Fatal("decodeChunk refused a usual chunk")
	}
	if b.ID != "chatcmpl-1" || b.Model != "m1" {
		t.Fatalf("second chunk: id %q, model %q", b.ID, b.Model)
	}
	var w wireChunk // a stream's chunk, which every chunk reuses
	if allocs := testing.AllocsPerRun(100, func() {
		w = wireChunk{}
		decodeChunk([]byte(`{"id":"chatcmpl-1","model":"m1"}`), &w, &seen)
	}); allocs != 0 && !raceEnabled {
		t.Errorf("a chunk repeating the id and model allocated %v times, want 0", allocs)
	}
}

// FuzzDecodeChunk checks decodeChunk against encoding/json on arbitrary
// payloads: whatever decodeChunk takes, encoding/json decodes without error
// and without an error event, into the same chunk.
func FuzzDecodeChunk(f *testing.F) {
	for _, seed := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"key\":\""}}]},"finish_reason":null}],"usage":null}`,
		`{"choices":[],"usage":{"prompt_tokens":19,"completion_tokens":6,"total_tokens":25,"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":2}}}`,
		`{"choices":[{"index":0,"delta":{"content":"caf\u00e9 \"q\" \\ \n","refusal":null},"logprobs":{"a":[1,-2.5e3,true,false,null]},"finish_reason":"stop"}]}`,
		`{"ID":"c","id":"d"}`,
		`{"error":null,"choices":[{"index":-0}]}`,
		"{\"choices\":[{\"delta\":{\"content\":\"\xe2\x82\"}}]}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		fast, slow, ok, slowErr := decodeBoth(t, payload)
		if ok {
			checkSame(t, payload, fast, slow, slowErr)
		}
	})
}
