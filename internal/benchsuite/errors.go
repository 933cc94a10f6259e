package benchsuite

import "errors"

// Errors of the suite.
var (
	// ErrUnknownWorkload is returned by Run for a name that is not one of
	// Workloads.
	ErrUnknownWorkload = errors.New("benchsuite: unknown workload")
	// ErrUnexpected is wrapped when a workload does not do what it should
	// (a turn fails, a reply is wrong): its figures would be meaningless.
	ErrUnexpected = errors.New("benchsuite: unexpected behaviour")
)
