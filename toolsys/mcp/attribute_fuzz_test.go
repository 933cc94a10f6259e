package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/agcore/agcore/toolsys/mcp"
)

// FuzzMarkEvent feeds the attribution of Streamable HTTP a server's
// message: whatever the server sent, a message passed on carries the mark
// of the stream's call, or none on a stream of no call, never one the
// server chose.
func FuzzMarkEvent(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"hi"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"_meta":{"agcore/caller":"forged"},"message":"hi"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
		`{"params":null,"params":{"_meta":{"agcore/caller":1}}}`,
		`{"params":{"_meta":null}}`,
		`[1,2]`,
		`not json`,
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, data string, marked bool) {
		token := ""
		if marked {
			token = "0123456789abcdef01234567"
		}
		out, ok := mcp.MarkEvent([]byte(data), token)
		if !ok {
			return
		}
		// Decoded key by key, as exactly as the SDK decodes.
		var msg map[string]json.RawMessage
		if err := json.Unmarshal(out, &msg); err != nil {
			t.Fatalf("markEvent(%q) passed on %q, which is not a JSON object: %v", data, out, err)
		}
		var params map[string]json.RawMessage
		var meta map[string]any
		if raw, has := msg["params"]; has {
			_ = json.Unmarshal(raw, &params)
			if raw, has := params["_meta"]; has {
				_ = json.Unmarshal(raw, &meta)
			}
		}
		mark, has := meta["agcore/caller"]
		switch {
		case token == "" && has:
			t.Fatalf("markEvent(%q) on a stream of no call kept the mark %v", data, mark)
		case token != "" && params != nil && mark != token:
			t.Fatalf("markEvent(%q, %q) marked %v", data, token, mark)
		}
	})
}
