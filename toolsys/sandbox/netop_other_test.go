//go:build !linux

package sandbox_test

// netOp is only used where Landlock exists.
func netOp(op string) string { return "unsupported op " + op }
