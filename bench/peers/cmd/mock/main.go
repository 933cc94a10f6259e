// Command mock serves the workload's scripted model as an OpenAI-compatible
// API on a loopback address, for the peer benchmarks. It prints the API's
// base URL (including "/v1") on the first line of its output, then serves
// until it receives SIGINT or SIGTERM.
//
//	mock -addr 127.0.0.1:0
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/bench/peers/internal/workload"
	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/scripted"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on (port 0 picks a free one)")
	verbose := flag.Bool("v", false, "log every request to stderr")
	flag.Parse()
	if err := run(*addr, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "mock:", err)
		os.Exit(1)
	}
}

func run(addr string, verbose bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := zerolog.Nop()
	if verbose {
		log = zerolog.New(os.Stderr).With().Timestamp().Logger()
	}
	model, err := scripted.New(workload.Script(), scripted.Options{Model: workload.Model})
	if err != nil {
		return err
	}
	srv, err := mockllm.Start(ctx, addr, mockllm.Config{Provider: model, Logger: log})
	if err != nil {
		return err
	}
	if _, err := fmt.Println(srv.URL()); err != nil {
		_ = srv.Close()
		return err
	}
	<-ctx.Done()
	return srv.Close()
}
