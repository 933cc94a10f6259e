package builtin

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// All returns every built-in tool, bridged into toolsys.Tool values:
// read_file, write_file, edit_file, list_dir, glob, grep, bash,
// bash_process and web_fetch. bash and bash_process share
// opts.Processes and opts.Sandbox; when they are nil a new ProcessManager
// and a new Sandbox are created for them (see Options).
func All(opts Options) []toolsys.Tool {
	procs := opts.Processes
	if procs == nil {
		procs = NewProcessManager(ProcessOptions{Logger: opts.Logger})
	}
	opts.Sandbox = opts.sandbox()
	return []toolsys.Tool{
		toolsys.Bridge[ReadFileParams](NewReadFile(opts)),
		toolsys.Bridge[WriteFileParams](NewWriteFile(opts)),
		toolsys.Bridge[EditFileParams](NewEditFile(opts)),
		toolsys.Bridge[ListDirParams](NewListDir(opts)),
		toolsys.Bridge[GlobParams](NewGlob(opts)),
		toolsys.Bridge[GrepParams](NewGrep(opts)),
		toolsys.Bridge[BashParams](NewBash(opts, procs)),
		toolsys.Bridge[BashProcessParams](NewBashProcess(opts, procs)),
		toolsys.Bridge[WebFetchParams](NewWebFetch(opts)),
	}
}

// ruleSubjectPath is the subject permission rules match for a file tool's
// path: the path as the workspace resolves it (symlinks followed, ".."
// folded, an absolute path inside the root made relative), with forward
// slashes and no leading "./"; "." for the workspace root. So a rule such as
// write_file(secrets/**) holds for "secrets/x", "/ws/secrets/x",
// "docs/../secrets/x" and a symlink into secrets/ alike. A path the workspace
// refuses (the call will fail) or a call without a workspace is matched in
// its cleaned form.
func ruleSubjectPath(p string, tc *toolsys.Context) string {
	if p == "" {
		p = "."
	}
	if tc != nil && tc.Workspace != nil {
		if abs, err := tc.Workspace.Resolve(p); err == nil {
			return tc.Workspace.Rel(abs)
		}
	}
	return strings.TrimPrefix(path.Clean(filepath.ToSlash(p)), "./")
}

// RuleSubject is the path, as permission rules match it.
func (*ReadFile) RuleSubject(p ReadFileParams, tc *toolsys.Context) string {
	return ruleSubjectPath(p.Path, tc)
}

// RuleSubject is the path, as permission rules such as write_file(docs/**)
// match it.
func (*WriteFile) RuleSubject(p WriteFileParams, tc *toolsys.Context) string {
	return ruleSubjectPath(p.Path, tc)
}

// RuleSubject is the path, as permission rules match it.
func (*EditFile) RuleSubject(p EditFileParams, tc *toolsys.Context) string {
	return ruleSubjectPath(p.Path, tc)
}

// RuleSubject is the directory, as permission rules match it.
func (*ListDir) RuleSubject(p ListDirParams, tc *toolsys.Context) string {
	return ruleSubjectPath(p.Path, tc)
}

// RuleSubject is the directory searched, as permission rules match it.
func (*Glob) RuleSubject(p GlobParams, tc *toolsys.Context) string {
	return ruleSubjectPath(p.Path, tc)
}

// RuleSubject is the file or directory searched, as permission rules match
// it.
func (*Grep) RuleSubject(p GrepParams, tc *toolsys.Context) string {
	return ruleSubjectPath(p.Path, tc)
}

// The tools implement the typed contract and the optional interfaces they
// are meant to.
var (
	_ toolsys.Typed[ReadFileParams]               = (*ReadFile)(nil)
	_ toolsys.Typed[WriteFileParams]              = (*WriteFile)(nil)
	_ toolsys.Typed[EditFileParams]               = (*EditFile)(nil)
	_ toolsys.Prechecker[EditFileParams]          = (*EditFile)(nil)
	_ toolsys.Typed[ListDirParams]                = (*ListDir)(nil)
	_ toolsys.Typed[GlobParams]                   = (*Glob)(nil)
	_ toolsys.Typed[GrepParams]                   = (*Grep)(nil)
	_ toolsys.Typed[BashParams]                   = (*Bash)(nil)
	_ toolsys.Prechecker[BashParams]              = (*Bash)(nil)
	_ toolsys.TypedRuleSubjecter[BashParams]      = (*Bash)(nil)
	_ toolsys.TypedMultiRuleSubjecter[BashParams] = (*Bash)(nil)
	_ toolsys.Typed[BashProcessParams]            = (*BashProcess)(nil)
	_ toolsys.Prechecker[BashProcessParams]       = (*BashProcess)(nil)
	_ toolsys.Typed[WebFetchParams]               = (*WebFetch)(nil)
	_ toolsys.TypedRuleSubjecter[WriteFileParams] = (*WriteFile)(nil)
	_ toolsys.TypedRuleSubjecter[EditFileParams]  = (*EditFile)(nil)
	_ toolsys.TypedRuleSubjecter[WebFetchParams]  = (*WebFetch)(nil)
	_ toolsys.IdempotentTool                      = (*WriteFile)(nil)
	_ toolsys.IdempotentTool                      = (*EditFile)(nil)
)
