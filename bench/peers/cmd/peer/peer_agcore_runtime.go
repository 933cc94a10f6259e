//go:build agcore_runtime

package main

import "github.com/agcore/agcore/bench/peers/internal/drivers/agcoreruntime"

// peer is chosen by the agcore_runtime build tag.
var peer = agcoreruntime.Peer
