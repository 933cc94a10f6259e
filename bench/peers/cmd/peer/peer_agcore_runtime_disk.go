//go:build agcore_runtime_disk

package main

import "github.com/agcore/agcore/bench/peers/internal/drivers/agcoreruntime"

// peer is chosen by the agcore_runtime_disk build tag.
var peer = agcoreruntime.DiskPeer
