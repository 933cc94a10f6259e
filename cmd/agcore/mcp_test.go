package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// TestMCPServe_Stdio connects the go-sdk client to `agcore mcp serve` over
// its stdin and stdout and calls built-in tools.
func TestMCPServe_Stdio(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := &app{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }, log: zerolog.Nop()}
	cmd := newMCPCommand(a)
	cmd.SetArgs([]string{"serve", "--workspace", dir, "--deny", "read_file(secret*)"})
	cmd.SetIn(inR)
	cmd.SetOut(outW)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(ctx)
		outW.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool, path string
		isError    bool
		want       string
	}{
		{"read_file", "a.txt", false, "alpha"},
		{"read_file", "secret.txt", true, "deny rule"},
		{"write_file", "b.txt", true, "permission denied"}, // ask mode, no approver
	}
	for _, tt := range tests {
		args := map[string]any{"path": tt.path}
		if tt.tool == "write_file" {
			args["content"] = "x"
		}
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tt.tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s %s: %v", tt.tool, tt.path, err)
		}
		got := res.Content[0].(*sdk.TextContent).Text
		if res.IsError != tt.isError || !strings.Contains(got, tt.want) {
			t.Errorf("%s %s = %v %q, want IsError=%v containing %q", tt.tool, tt.path, res.IsError, got, tt.isError, tt.want)
		}
	}
	_ = cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("mcp serve: %v", err)
	}
}
