//go:build !unix

package sandbox

import "os/exec"

// killStarted kills a command whose start failed.
func killStarted(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// ownGroup does nothing where process groups are not supported.
func ownGroup(*exec.Cmd) {}
