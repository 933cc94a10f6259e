//go:build !race

package cluster_test

// raceEnabled reports that the race detector is on.
const raceEnabled = false
