//go:build eino_react

package main

import "github.com/agcore/agcore/bench/peers/internal/drivers/einoreact"

// peer is chosen by the eino_react build tag.
var peer = einoreact.Peer
