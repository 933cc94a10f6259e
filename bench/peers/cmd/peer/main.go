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
//
// -cpuprofile and -memprofile write profiles of the whole run (warm-up
// included) for go tool pprof. The heap profile is written once the turns
// have run, before the driver is closed, so that its in-use figures show
// what the peer holds at the end of a run.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
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
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	memProfile := flag.String("memprofile", "", "write a heap profile to this file at the end of the run")
	flag.Parse()
	if *name {
		fmt.Println(peer.Name)
		return
	}
	err := profile(*cpuProfile, func() error {
		return run(*url, *memProfile, harness.Options{Turns: *turns, Concurrency: *concurrency, Warmup: *warmup})
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "peer %s: %v\n", peer.Name, err)
		os.Exit(1)
	}
}

func run(url, memProfile string, o harness.Options) error {
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
	if err == nil && memProfile != "" {
		err = writeHeap(memProfile)
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// profile runs fn under the CPU profiler when cpu names a file.
func profile(cpu string, fn func() error) (err error) {
	if cpu == "" {
		return fn()
	}
	f, err := os.Create(cpu)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	if err := pprof.StartCPUProfile(f); err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	defer pprof.StopCPUProfile()
	return fn()
}

// writeHeap writes a heap profile to path, after a collection.
func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		return errors.Join(fmt.Errorf("-memprofile: %w", err), f.Close())
	}
	return f.Close()
}
