package main

import (
	"errors"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/scripted"
)

// defaultMockAddr is where `agcore mock-llm` listens by default.
const defaultMockAddr = "127.0.0.1:8080"

// mockLoopbackOnly says why mock-llm refuses other addresses.
const mockLoopbackOnly = "mock-llm listens on a loopback address only, such as 127.0.0.1:8080 " +
	"(it has no authentication, so no other host may reach it)"

// checkMockAddr checks --addr: host:port with a loopback host (a
// loopback IP address or localhost). A name other than localhost is left
// to mockllm.Start, which resolves it.
func checkMockAddr(addr string) error {
	if err := checkListenAddr("--addr", addr); err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(addr) // checked
	if ip := net.ParseIP(host); host == "" || ip != nil && !ip.IsLoopback() {
		return &usageError{fmt.Errorf("--addr %s: %s", addr, mockLoopbackOnly)}
	}
	return nil
}

// newMockLLMCmd returns `agcore mock-llm`.
func newMockLLMCmd(a *app) *cobra.Command {
	var addr, script string
	cmd := &cobra.Command{
		Use:   "mock-llm",
		Short: "Serve a scripted model over an OpenAI-compatible HTTP API",
		Long: `Serve a deterministic, scripted model over an OpenAI-compatible HTTP API:
POST /v1/chat/completions (plain and streamed, with tool calls and usage) and
GET /v1/models. It listens on a loopback address only, needs no API key and
reaches no network.

Without --script it plays the demo script (list the workspace, read two files
in parallel, write SUMMARY.md, answer). A script file (.json, .yaml or .yml)
lists rules that match the last user or tool message and reply with text
and/or tool calls.

The base URL is printed on the first line of output. The server runs until
interrupted (Ctrl-C or SIGTERM), then lets requests in flight finish.`,
		Example: `  agcore mock-llm
  agcore mock-llm --addr 127.0.0.1:0 --script testdata/script.yaml
  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 agcore demo`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := checkMockAddr(addr); err != nil {
				return err
			}
			s := scripted.Demo()
			if script != "" {
				var err error
				if s, err = scripted.LoadFile(script); err != nil {
					return &usageError{fmt.Errorf("--script %s: %w", script, err)}
				}
			}
			log := component(a.log, "mock-llm")
			model, err := scripted.New(s, scripted.Options{Logger: component(a.log, "scripted")})
			if err != nil {
				return &usageError{fmt.Errorf("--script %s: %w", script, err)}
			}
			srv, err := mockllm.Start(ctx, addr, mockllm.Config{Provider: model, Logger: log})
			switch {
			case errors.Is(err, mockllm.ErrNonLoopback):
				return &usageError{fmt.Errorf("--addr %s: %s", addr, mockLoopbackOnly)}
			case err != nil:
				return listenError("--addr", addr, err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "mock LLM listening on %s\n", srv.URL())
			fmt.Fprintf(out, "try: OPENAI_BASE_URL=%s agcore demo\n", srv.URL())
			log.Info().Str("url", srv.URL()).Msg("serving; interrupt to stop")
			<-ctx.Done()
			log.Info().Msg("shutting down")
			return srv.Close()
		},
	}
	cmd.Flags().StringVar(&addr, "addr", defaultMockAddr, "loopback address to listen on (port 0 picks a free port)")
	cmd.Flags().StringVar(&script, "script", "", "script file (.json, .yaml or .yml) to play instead of the demo script")
	return cmd
}
