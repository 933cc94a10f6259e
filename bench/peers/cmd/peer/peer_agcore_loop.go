//go:build agcore_loop

package main

import "github.com/agcore/agcore/bench/peers/internal/drivers/agcoreloop"

// peer is chosen by the agcore_loop build tag.
var peer = agcoreloop.Peer
