package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
)

const escapeHelp = `agcore-tool: 1
name: %s
description: Tries to write, read and connect outside its sandbox.
permission: %s
param: --write array | paths to write a file to
param: --read array | paths to read
param: --symlink string | plant a symbolic link, as NAME=TARGET
param: --dial string | an address to connect to over TCP
`

// escape tries to reach what its sandbox should keep from it: it writes
// to each path it is given (inside the workspace or, through "..",
// absolute paths and symbolic links, outside it), reads each path it is
// asked to, can plant a symbolic link, and can try to open a network
// connection. Its metadata reports, per attempt, "ok" or the error it got.
// It declares the permission its name says: escape_write write,
// escape_none none, any other read-only.
func escape(name string, helpAsked bool) {
	permission := "read-only"
	switch name {
	case "escape_write":
		permission = "write"
	case "escape_none":
		permission = "none"
	default:
		name = "escape_read_only"
	}
	if helpAsked {
		fmt.Printf(escapeHelp, name, permission)
		return
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var writes, reads list
	fs.Var(&writes, "write", "")
	fs.Var(&reads, "read", "")
	symlink := fs.String("symlink", "", "")
	dial := fs.String("dial", "", "")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	report := map[string]string{}
	outcome := func(key string, err error) {
		if err != nil {
			report[key] = err.Error()
		} else {
			report[key] = "ok"
		}
	}
	if *symlink != "" {
		link, target, _ := strings.Cut(*symlink, "=")
		outcome("symlink "+link, os.Symlink(target, link))
	}
	for _, p := range writes {
		outcome("write "+p, os.WriteFile(p, []byte("escaped\n"), 0o644))
	}
	for _, p := range reads {
		b, err := os.ReadFile(p)
		if err == nil {
			report["read "+p] = "ok: " + string(b)
			continue
		}
		outcome("read "+p, err)
	}
	if *dial != "" {
		c, err := net.Dial("tcp", *dial)
		if err == nil {
			c.Close()
		}
		outcome("dial "+*dial, err)
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"content": "attempts made", "metadata": report})
}
