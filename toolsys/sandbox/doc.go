// Package sandbox confines the commands an agent runs (the bash tool) with
// Landlock, the Linux security module that lets an unprivileged process
// restrict itself and its children.
//
// A program that runs confined commands calls Main first thing in main:
//
//	func main() {
//		sandbox.Main() // returns at once, unless this process is a helper
//		...
//	}
//
// and starts each command through a Sandbox:
//
//	sb := sandbox.New(sandbox.Config{AllowPorts: []int{443}})
//	st, err := sb.Check(ctx) // an *UnavailableError in Refuse mode when the host cannot confine
//	if err != nil {
//		return err
//	}
//	cmd := exec.Command("bash", "-c", script)
//	cmd.Dir = workspace
//	if !st.Confined { // Warn mode on a host that cannot confine
//		return cmd.Run()
//	}
//	release, err := sb.Start(ctx, cmd, workspace)
//	if err != nil {
//		return err
//	}
//	err = cmd.Wait()
//	release()
//
// # How a command is confined
//
// Landlock applies to a thread and what it executes, and a Go program
// cannot restrict one goroutine's thread safely, so Start re-executes the
// program (os.Executable, or Config.Executable) with a marker in its
// environment and two inherited pipes. In that child, Main reads the
// command and its rules from the first pipe, applies them to the whole
// process, drops its capabilities, installs a small seccomp filter, writes
// "confined N" (N the Landlock ABI in force) into the second pipe and
// executes the command, which keeps the process id and process group:
// killing the group on a timeout works as for any command.
//
// A confined command may:
//
//   - read and execute the system directories (/usr, /bin, /sbin, /lib*,
//     /etc, /opt, /proc), the root of the Go toolchain found on PATH, and
//     Config.ExtraReadPaths; files that hold secrets readable by root
//     (/etc/shadow, SSH host keys, /etc/ssl/private...) stay hidden;
//   - read and write its workspace, a private directory that is its HOME
//     and TMPDIR (new for every command, removed by release), /dev/null
//     and Config.ExtraWritePaths; move and link files between them, but
//     not make device nodes;
//   - connect to the TCP ports of Config.AllowPorts, on any host (Landlock
//     matches ports, not addresses); binding a TCP port is denied. From
//     ABI 10 on, UDP is denied too, except DNS (port 53) when some TCP
//     port is allowed.
//
// Everything else of the file system is denied, the user's home directory
// included. From ABI 6 on, the command cannot signal or connect to the
// abstract UNIX sockets of processes outside its sandbox, and with any
// ABI it cannot read the memory, environment or open files of such
// processes through /proc. Run by root, it keeps only the capabilities
// over file ownership (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER,
// CAP_FSETID); raw sockets, mounts, modules, device nodes, file handles and
// the rest are gone. It gets no file descriptor but stdin, stdout and
// stderr. A seccomp filter closes what Landlock misses: Multipath TCP
// sockets fail (clients fall back to plain TCP, which Landlock checks), so
// does a send with MSG_FASTOPEN (TCP Fast Open connects without the
// connect call); io_uring, the kernel keyrings and open_by_handle_at are
// refused; and below ABI 9, where Landlock does not check connecting to a
// UNIX socket by path (the docker or systemd socket), no UNIX socket can be
// made (socketpair still works).
//
// PATH keeps only the directories a command may execute from, so that a
// shell goes on to the next one instead of failing on a program it may
// not run. Config.Env adds variables under the command's own.
//
// # Toolchains
//
// The root of the Go toolchain whose go command is on PATH is readable, so
// go build and go test work. GOCACHE and GOPATH default to the private
// HOME: every command builds from an empty cache and downloads modules
// again (which needs an allowed port). To share a build cache, list it in
// ExtraWritePaths and set GOCACHE to it in Env. A toolchain or compiler
// outside the system directories (~/sdk/go, ~/.cargo) needs
// ExtraReadPaths; GOTOOLCHAIN=local keeps go from downloading another
// toolchain.
//
// # When commands cannot be confined
//
// Status probes the host once, by running `bash -c "exit 0"` confined. It
// reports unconfined, with the reason, on a system other than Linux, on a
// kernel whose Landlock ABI is below 4 (Linux 6.7: the first that can deny
// TCP connections), where Landlock is disabled or forbidden by a seccomp
// filter, and in a program that does not call Main (the helper does not
// answer). Config.Mode then decides: Refuse (the zero value) makes Check
// fail with an *UnavailableError naming the reason and the setting to
// change; Warn lets the caller run commands unconfined and logs a warning
// once. Probe reports the status of this program with the zero Config,
// for a diagnostic command.
//
// # What is not confined
//
// Landlock cannot restrict some operations on files outside the allowed
// hierarchies: stat, chmod, chown, utime, setxattr and access(2) still
// work on any path the user could reach. UDP is not restricted below ABI
// 10, nor other protocols than TCP and UDP (SCTP, ICMP sockets). Processes
// started by a command run confined too, but one that leaves the process
// group outlives the command.
package sandbox
