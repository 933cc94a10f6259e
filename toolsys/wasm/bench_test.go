package wasm_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/wasm"
)

var benchArgs = json.RawMessage(`{"mode":"encode","input":"hello, world","alphabet":"hex"}`)

// BenchmarkWASMTool measures the codec test tool against the same tool
// written in Go (nativeCodec), both called through a registry; every
// iteration runs the WASM side, then one native call, so that the two are
// measured under the same load. Each sub-benchmark reports the WASM side
// per operation and its ratio to the native call (x-native):
//
//   - cold: a new runtime on an empty cache loads the tool (compile, run
//     --help) and calls it once: the first start of a process;
//   - warm-restart: the same on a cache a previous runtime filled: the
//     first call after a restart;
//   - steady: one more call of a loaded tool: an instantiation of the
//     compiled module, the run, the result mapping.
func BenchmarkWASMTool(b *testing.B) {
	ctx := context.Background()
	path := wasmFile(b, "codec")
	native := openRegistry(b, nil)
	toolsys.MustRegisterTyped[codecParams](native, nativeCodec{})
	nativeCall := func() time.Duration {
		start := time.Now()
		if res, err := native.Call(ctx, "codec", benchArgs, nil); err != nil || res.Content != "68656c6c6f2c20776f726c64" {
			b.Fatal(res, err)
		}
		return time.Since(start)
	}
	// loadAndCall starts a runtime on cache, loads the tool, calls it once
	// and closes the runtime.
	loadAndCall := func(cache string) time.Duration {
		start := time.Now()
		rt, err := wasm.NewRuntime(ctx, wasm.Config{CacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		tool, err := rt.Load(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		reg := openRegistry(b, nil)
		reg.MustRegister(tool, toolsys.WithSource(toolsys.SourceWASM))
		if res, err := reg.Call(ctx, "codec", benchArgs, nil); err != nil || res.Content != "68656c6c6f2c20776f726c64" {
			b.Fatal(res, err)
		}
		took := time.Since(start)
		if err := rt.Close(ctx); err != nil {
			b.Fatal(err)
		}
		return took
	}
	report := func(b *testing.B, wasmTime, nativeTime time.Duration) {
		b.ReportMetric(float64(wasmTime.Nanoseconds())/float64(b.N), "wasm-ns/op")
		b.ReportMetric(float64(nativeTime.Nanoseconds())/float64(b.N), "native-ns/op")
		b.ReportMetric(float64(wasmTime)/float64(nativeTime), "x-native")
	}

	b.Run("cold", func(b *testing.B) {
		var w, n time.Duration
		for i := 0; b.Loop(); i++ {
			cache := filepath.Join(b.TempDir(), "cache")
			w += loadAndCall(cache)
			n += nativeCall()
			_ = os.RemoveAll(cache)
		}
		report(b, w, n)
	})
	b.Run("warm-restart", func(b *testing.B) {
		cache := filepath.Join(b.TempDir(), "cache")
		loadAndCall(cache)
		var w, n time.Duration
		for b.Loop() {
			w += loadAndCall(cache)
			n += nativeCall()
		}
		report(b, w, n)
	})
	b.Run("steady", func(b *testing.B) {
		rt := newRuntime(b, wasm.Config{CacheDir: filepath.Join(b.TempDir(), "cache")})
		reg := openRegistry(b, nil)
		reg.MustRegister(load(b, rt, "codec"), toolsys.WithSource(toolsys.SourceWASM))
		var w, n time.Duration
		for b.Loop() {
			start := time.Now()
			if res, err := reg.Call(ctx, "codec", benchArgs, nil); err != nil || res.IsError {
				b.Fatal(res, err)
			}
			w += time.Since(start)
			n += nativeCall()
		}
		report(b, w, n)
	})
}
