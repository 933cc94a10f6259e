//go:build unix

package sandbox

import (
	"os/exec"
	"syscall"
)

// killStarted kills a command whose start failed: its whole process group
// when it has one of its own (the command may already have started
// children), else the process.
func killStarted(cmd *exec.Cmd) {
	if a := cmd.SysProcAttr; a != nil && a.Setpgid && a.Pgid == 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return
	}
	_ = cmd.Process.Kill()
}

// ownGroup makes cmd start in a process group of its own, which
// killStarted kills whole.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
