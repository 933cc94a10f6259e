//go:build race

package actors_test

// raceEnabled reports that the race detector is on: it changes what the
// heap holds, so heap measurements skip.
const raceEnabled = true
