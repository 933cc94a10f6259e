//go:build langchaingo

package main

import "github.com/agcore/agcore/bench/peers/internal/drivers/langchaingo"

// peer is chosen by the langchaingo build tag.
var peer = langchaingo.Peer
