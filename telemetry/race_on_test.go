//go:build race

package telemetry_test

// raceEnabled reports that the race detector is on: it changes what the
// heap holds, so allocation counts skip.
const raceEnabled = true
