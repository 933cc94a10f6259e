package mcp_test

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys/mcp"
)

// FuzzResultFromMCP maps arbitrary tools/call replies: decoding may fail,
// but a decoded reply always maps, keeps isError, and yields metadata that
// encodes as JSON.
func FuzzResultFromMCP(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
		`{"content":[],"isError":true}`,
		`{"content":[{"type":"image","mimeType":"image/png","data":"iVBORw=="}],"structuredContent":{"x":[1,2]}}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a","blob":"AAE="}}]}`,
		`{"content":[{"type":"resource_link","uri":"file:///b","name":"b"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r sdk.CallToolResult
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		res := mcp.ResultFromMCP(&r)
		if res.IsError != r.IsError {
			t.Fatalf("IsError = %v, reply said %v", res.IsError, r.IsError)
		}
		if res.IsError && res.Content == "" {
			t.Fatal("an error result without text")
		}
		if _, err := json.Marshal(res.Metadata); err != nil {
			t.Fatalf("metadata does not encode: %v", err)
		}
	})
}
