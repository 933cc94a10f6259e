// Package wasm makes WebAssembly command-line programs agcore tools: a
// .wasm file (a WASI preview 1 command, built by any toolchain, such as
// GOOS=wasip1 GOARCH=wasm go build) dropped into a folder becomes a tool
// in a toolsys.Registry, behind the same permission pipeline, argument
// validation, secrets and output cap as every other tool.
//
//	rt, err := wasm.NewRuntime(ctx, wasm.Config{CacheDir: filepath.Join(dataDir, "cache", "wasm")})
//	if err != nil {
//		return err
//	}
//	defer rt.Close(ctx)
//	folder, err := rt.Folder(wasm.FolderConfig{Dir: filepath.Join(dataDir, "tools"), Registry: reg})
//	if err != nil {
//		return err
//	}
//	defer folder.Close()
//	if err := folder.Watch(ctx); err != nil { // load the folder, then follow it
//		return err
//	}
//	res, err := reg.Call(ctx, "codec", json.RawMessage(`{"mode":"encode","input":"hi"}`), tc)
//
// Runtime.Load makes a tool of one file, for a program that manages its
// files itself. docs/wasm-tools.md is the guide for tool authors.
//
// # The --help convention
//
// A tool describes itself when run with the single argument --help: it
// prints, on standard output, lines of "key: value" and exits with status
// 0. The first line is "agcore-tool: 1"; then come the name (optional,
// the file's name by default), a one-line description, the permission
// level, whether it is idempotent, its environment, and one line per
// parameter:
//
//	agcore-tool: 1
//	name: codec
//	description: Encodes text as base64 or hex, or decodes it back.
//	permission: none
//	param: --mode string required enum=encode enum=decode | encode or decode the input
//	param: --input string required | the text to transform
//	param: --alphabet string default=base64 enum=base64 enum=hex | the encoding to use
//
// ParseHelp documents the grammar. A text that breaks it is refused with a
// *HelpError naming the file and the line.
//
// # Arguments
//
// The schema the model sees is generated from the parameters and
// normalised like every tool's; the model's arguments are checked by the
// same validator (toolsys.CompileSchema), and then passed on the command
// line in the declared order: {"mode":"encode","input":"hi"} becomes
// --mode encode --input hi, a true boolean a bare flag, an array its flag
// repeated (see Help.Args). Secret placeholders are replaced only in the
// parameters declared secret.
//
// # Results
//
// Standard output that is one JSON object {"content": ..., "error": bool,
// "metadata": {...}} makes the result's Content, IsError and Metadata;
// any other output is the content as plain text. A non-zero exit status,
// a trap and the timeout make error results that say so, with the head of
// standard error; standard error is logged to the call's logger.
//
// # Sandbox
//
// Each call instantiates the compiled module once, with:
//
//   - the workspace as the only directory, mounted at "/": not at all for
//     a tool of permission none, read-only below write. Every path is
//     resolved by the kernel beneath the workspace's root (os.Root), so
//     "..", absolute paths and symbolic links, planted before or by the
//     tool, stay inside; named pipes, sockets and devices are refused, and
//     hard-linked files unless Config.Files allows them;
//   - no sockets (WASI preview 1 cannot open one, and none is preopened)
//     and no processes;
//   - the environment the tool declared, and nothing of the host's;
//   - a memory cap (Config.MemoryLimitPages), a wall-time limit
//     (Config.Timeout and the call's context; the module is closed when it
//     passes) and an output cap (Config.OutputLimit).
//
// # Folders
//
// A Folder keeps a registry in step with a folder: every *.wasm file that
// loads is registered with source wasm, a changed file is recompiled, a
// removed one unregistered; files that do not load are refused one by one
// while the rest load. Folder.Watch follows the folder through the
// platform's file notifications.
//
// # Speed
//
// wazero compiles a module to native code once; with Config.CacheDir the
// compiled code is kept on disk, so that a restarted process loads a tool
// without compiling it again. A call costs one instantiation of the
// compiled module (for a Go program, the start of its runtime): a few
// milliseconds.
package wasm
