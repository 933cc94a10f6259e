package skills

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/agcore/agcore/toolsys"
)

// ReadFile wraps the read_file tool so that it also reads the resources of
// the catalog's skills. A call whose path is absolute and lies in a skill's
// folder (as load_skill gives it) runs the wrapped tool with that folder as
// its workspace: the file is opened through a root on the skill folder, so
// a "..", an absolute path elsewhere or a symlink that leads out of the
// folder is refused as the workspace refuses it, and only read_file gets
// this access (write_file, edit_file and the others still see the
// workspace alone). Every other call runs the wrapped tool unchanged, on
// the call's own workspace.
//
// The wrapper keeps the wrapped tool's name, schema, permission and
// permission-rule subjects, so rules such as read_file(/srv/skills/**)
// apply as before.
func (c *Catalog) ReadFile(inner toolsys.Tool) toolsys.Tool {
	return &readFile{Tool: inner, c: c}
}

// readFile is the Tool ReadFile returns.
type readFile struct {
	toolsys.Tool
	c *Catalog
}

var (
	_ toolsys.RuleSubjecter      = (*readFile)(nil)
	_ toolsys.MultiRuleSubjecter = (*readFile)(nil)
)

// Description is the wrapped tool's, with a word on skill files.
func (t *readFile) Description() string {
	return t.Tool.Description() + " It also reads the files of a skill, by the absolute paths load_skill lists."
}

// Execute runs the wrapped tool, on the skill's folder when the path lies
// in one.
func (t *readFile) Execute(ctx context.Context, args json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	var p struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &p) == nil {
		if e, ok := t.c.folderOf(p.Path); ok {
			sc := toolsys.Context{}
			if tc != nil {
				sc = *tc
			}
			sc.Workspace = e.ws
			return t.Tool.Execute(ctx, args, &sc)
		}
	}
	return t.Tool.Execute(ctx, args, tc)
}

// RuleSubject is the wrapped tool's.
func (t *readFile) RuleSubject(args json.RawMessage, tc *toolsys.Context) string {
	if rs, ok := t.Tool.(toolsys.RuleSubjecter); ok {
		return rs.RuleSubject(args, tc)
	}
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		return string(args)
	}
	return b.String()
}

// RuleSubjects is the wrapped tool's.
func (t *readFile) RuleSubjects(args json.RawMessage, tc *toolsys.Context) toolsys.Subjects {
	if ms, ok := t.Tool.(toolsys.MultiRuleSubjecter); ok {
		return ms.RuleSubjects(args, tc)
	}
	return toolsys.Subjects{}
}
