//go:build !unix

package benchsuite

import "time"

// processCPU returns 0: CPU time is only measured on Unix systems, and the
// CPU figures of a report are then zero.
func processCPU() time.Duration { return 0 }
