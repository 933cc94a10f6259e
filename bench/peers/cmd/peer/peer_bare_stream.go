//go:build bare_stream

package main

import "github.com/agcore/agcore/bench/peers/internal/drivers/bare"

// peer is chosen by the bare_stream build tag.
var peer = bare.StreamPeer
