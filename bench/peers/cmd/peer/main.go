// Command peer runs the workload on one peer and prints the measurements
// as one JSON object. Which peer is chosen at build time by a build tag, so
// that each binary links one framework only:
//
//	go build -o bin/ ./cmd/peer                        # bare (the default)
//	go build -tags eino_react     -o bin/eino-react ./cmd/peer
//	go build -tags eino_adk       -o bin/eino-adk ./cmd/peer
//	go build -tags langchaingo    -o bin/langchaingo ./cmd/peer
//	go build -tags agcore_loop    -o bin/agcore-loop ./cmd/peer
//	go build -tags agcore_runtime -o bin/agcore-runtime ./cmd/peer
//	go build -tags agcore_runtime_reuse -o bin/agcore-runtime-reuse ./cmd/peer
//	go build -tags agcore_runtime_disk  -o bin/agcore-runtime-disk ./cmd/peer
//	go build -tags bare_stream    -o bin/bare-stream ./cmd/peer
//
// Usage:
//
//	peer -url http://127.0.0.1:PORT/v1 -turns 1000 -concurrency 16 -warmup 200
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
)

func main() {
	url := flag.String("url", "", "base URL of the mock's API, including /v1 (required)")
	turns := flag.Int("turns", 1000, "measured turns")
	concurrency := flag.Int("concurrency", 1, "goroutines running turns")
	warmup := flag.Int("warmup", 200, "turns run before measuring")
	name := flag.Bool("name", false, "print the peer's name and exit")
	flag.Parse()
	if *name {
		fmt.Println(peer.Name)
		return
	}
	if err := run(*url, harness.Options{Turns: *turns, Concurrency: *concurrency, Warmup: *warmup}); err != nil {
		fmt.Fprintf(os.Stderr, "peer %s: %v\n", peer.Name, err)
		os.Exit(1)
	}
}

func run(url string, o harness.Options) error {
	if url == "" {
		return errors.New("-url is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := peer.New(ctx, harness.Env{BaseURL: url, HTTPClient: workload.HTTPClient(o.Concurrency)})
	if err != nil {
		return err
	}
	res, err := harness.Run(ctx, peer.Name, d, o)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}
