// Command suite holds the WASM test tools other than codec, one per file,
// in a single module so that the tests compile it once. The program name
// (the file's name without ".wasm", which agcore passes as the first
// argument) chooses the tool: crash, loop, hog, badhelp, escape
// (escape_none, escape_read_only, escape_write), and meta for any other
// name.
package main

import (
	"os"
	"path/filepath"
	"strings"
)

func main() {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".wasm")
	helpAsked := len(os.Args) == 2 && os.Args[1] == "--help"
	switch {
	case name == "crash":
		crash(helpAsked)
	case name == "loop":
		loop(helpAsked)
	case name == "hog":
		hog(helpAsked)
	case name == "badhelp":
		badhelp(helpAsked)
	case strings.HasPrefix(name, "escape"):
		escape(name, helpAsked)
	default:
		meta(helpAsked)
	}
}
