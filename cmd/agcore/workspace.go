package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// sampleProject returns the small project the demo's workspace starts
// with: file name to content.
func sampleProject() map[string]string {
	return map[string]string{
		"README.md": `# greeter

greeter prints a friendly greeting. Run it with:

    go run . -name Ada

It is the sample project of the agcore demo: the agent explores it with
its file tools and writes SUMMARY.md.
`,
		"go.mod": `module example.com/greeter

go 1.26
`,
		"main.go": `// Command greeter prints a greeting.
package main

import (
	"flag"
	"fmt"
)

func main() {
	name := flag.String("name", "world", "who to greet")
	flag.Parse()
	fmt.Printf("Hello, %s!\n", *name)
}
`,
	}
}

// seedWorkspace writes the sample project into dir when dir is empty, and
// returns the names of the files dir holds afterwards.
func seedWorkspace(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if len(entries) == 0 {
		for name, content := range sampleProject() {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				return nil, fmt.Errorf("workspace: %w", err)
			}
		}
		if entries, err = os.ReadDir(dir); err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
	}
	return entryNames(entries), nil
}

// listWorkspace returns the names of the files dir holds, sorted.
func listWorkspace(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return entryNames(entries), nil
}

// entryNames returns the names of entries, sorted.
func entryNames(entries []os.DirEntry) []string {
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}
