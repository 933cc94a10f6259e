//go:build !eino_react && !eino_adk && !langchaingo && !agcore_loop && !agcore_runtime && !agcore_runtime_reuse && !agcore_runtime_disk && !bare_stream

package main

import "github.com/agcore/agcore/bench/peers/internal/drivers/bare"

// peer is the bare go-openai loop, the binary built without a peer tag (or
// with -tags bare).
var peer = bare.Peer
