package main

import (
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/builtin"
)

// fileTools returns a registry of the built-in file tools: list_dir,
// read_file, write_file, edit_file, glob and grep. All of them are confined
// to the call's workspace; none runs commands or reaches the network.
func fileTools(log zerolog.Logger) (*toolsys.Registry, error) {
	opts := builtin.Options{Logger: log}
	reg := toolsys.NewRegistry(toolsys.Config{Logger: log})
	for _, t := range []toolsys.Tool{
		toolsys.Bridge[builtin.ListDirParams](builtin.NewListDir(opts)),
		toolsys.Bridge[builtin.ReadFileParams](builtin.NewReadFile(opts)),
		toolsys.Bridge[builtin.WriteFileParams](builtin.NewWriteFile(opts)),
		toolsys.Bridge[builtin.EditFileParams](builtin.NewEditFile(opts)),
		toolsys.Bridge[builtin.GlobParams](builtin.NewGlob(opts)),
		toolsys.Bridge[builtin.GrepParams](builtin.NewGrep(opts)),
	} {
		if err := reg.Register(t, toolsys.WithCategory("files")); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
