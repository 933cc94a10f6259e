//go:build eino_adk

package main

import "github.com/agcore/agcore/bench/peers/internal/drivers/einoadk"

// peer is chosen by the eino_adk build tag.
var peer = einoadk.Peer
