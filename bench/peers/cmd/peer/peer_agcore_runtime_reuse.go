//go:build agcore_runtime_reuse

package main

import "github.com/agcore/agcore/bench/peers/internal/drivers/agcoreruntime"

// peer is chosen by the agcore_runtime_reuse build tag.
var peer = agcoreruntime.ReusePeer
