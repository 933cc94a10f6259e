//go:build !race

package messages

// raceEnabled reports whether the race detector is on; it adds allocations
// of its own, so allocation counts are only checked without it.
const raceEnabled = false
