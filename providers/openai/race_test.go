//go:build race

package openai

// raceEnabled is true when the race detector is on: sync.Pool then drops
// a quarter of what is put into it, on purpose.
const raceEnabled = true
