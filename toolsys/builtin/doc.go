// Package builtin holds agcore's built-in tools: read_file, write_file,
// edit_file, list_dir, glob, grep, bash, bash_process and web_fetch, and
// the memory tools (MemoryTools).
//
// Every tool is a toolsys.Typed[P]: its parameter struct is the JSON schema
// the model sees and the parser of the model's arguments. All returns the
// whole set bridged into toolsys.Tool values, ready for a registry:
//
//	pm := builtin.NewProcessManager(builtin.ProcessOptions{})
//	defer pm.Close()
//	for _, t := range builtin.All(builtin.Options{Processes: pm}) {
//		if err := reg.Register(t); err != nil {
//			return err
//		}
//	}
//
// # Files
//
// The file tools (read_file, write_file, edit_file, list_dir, glob, grep)
// reach files only through the call's toolsys.Workspace: a path is mapped to
// a name inside the workspace (symlinks that stay inside are followed, ones
// that lead outside are refused with an error naming the link), and every
// open, stat, create, rename and walk then goes through the workspace's
// os.Root, so a directory swapped for a symlink between a check and an open
// cannot lead outside. Without a workspace they refuse to run. They read and
// write regular files only: a named pipe, socket or device is refused at
// once (never blocked on), and a file with more than one hard link is
// refused unless Options.AllowHardlinks is set, since its other name may lie
// outside the workspace. Paths in their output are relative to the
// workspace root, with forward slashes. Writes are atomic: a temporary file
// in the target's directory is written, synced and renamed over the target,
// all relative to that directory. Directory walks never follow symlinks and
// skip .git; grep skips what it may not read.
//
// # Commands
//
// bash runs `bash -c COMMAND` in the workspace root, in a process group of
// its own. On timeout or cancellation the whole group is killed with
// SIGKILL, so children the command spawned die with it; processes the
// command leaves behind when it exits are killed too (a server that must
// keep running belongs in run_in_background). The command sees a minimal
// environment, never the agent's own: PATH, HOME and LANG inherited from the
// agent (PATH and LANG with safe defaults when unset), plus the variables
// the call passes in env. Background commands live in a ProcessManager that
// bash and bash_process share; bash_process polls their output, waits for
// them, stops them and lists them.
//
// Commands, foreground and background, run confined by Options.Sandbox
// (Landlock, see package sandbox): they read the system directories,
// write only the workspace and a private HOME and TMPDIR, and connect to
// the allowed TCP ports only. This needs the program to call sandbox.Main
// first thing in main. Where the host cannot confine them, bash's
// description says so, and the default Refuse mode makes bash and
// bash_process fail with the reason and the setting to change.
//
// Permission rules see a bash call as the commands its script runs,
// resolved on the bash syntax tree: "git status; rm -rf x" is two subjects,
// so an allow rule bash(git *) does not allow it and a deny rule bash(rm *)
// refuses it; so does that rule refuse "X=1 /bin/rm x", "env -i rm x",
// "sudo rm x", "find . -delete" and "bash -c 'rm x'", whose commands are
// found through the wrappers and the shell code. A script that may run a
// command the resolver cannot name ("$(echo rm) x", "echo 'rm x' | bash",
// eval of a variable) is refused by every deny rule with an argument
// pattern; a script whose effect its words do not show (program text for
// an interpreter, git -c core.pager=..., a redirection to a file, $VAR in
// an argument, the env parameter...) is allowed by no argument pattern and
// goes to the approver. These rules are a guard-rail against a model's
// honest mistakes; the security boundary of bash is the confinement it
// runs in.
//
// # Web
//
// web_fetch fetches http and https URLs whose host the call's
// AllowedHosts permit (checked again on every redirect), within a size and a
// time limit, and turns HTML into readable text: scripts and styles dropped,
// headings, paragraphs and lists kept, links written as "text (url)".
//
// # Memory
//
// MemoryTools returns memory_write, memory_read, memory_search and
// memory_delete over two stores the caller provides: the session's
// key-value notes (MemoryNotes), which the runtime also shows in the
// session's system prompt, and the knowledge base (MemoryPages), whose
// pages outlive sessions and are found by keyword. Writes go through the
// stores' own rules: their key checks, their size limits and the knowledge
// base's eviction policy. Knowledge pages are kept per agent by default
// (ScopeAgent: an agent neither reads, finds nor deletes another agent's
// pages) or shared (ScopeShared). Writing and deleting need PermWrite.
package builtin
