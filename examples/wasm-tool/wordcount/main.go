// Command wordcount is an agcore WebAssembly tool: it counts the lines,
// words and bytes of a file in the workspace and lists its most frequent
// words. Build it for WASI and drop it into agcore's tool folder:
//
//	GOOS=wasip1 GOARCH=wasm go build -o ~/.local/share/agcore/tools/wordcount.wasm ./examples/wasm-tool/wordcount
//
// It follows the convention of docs/wasm-tools.md: run with --help, it
// prints its description and parameters; run with its parameters as
// flags, it answers with a JSON result object on standard output. The
// workspace is its root directory, read-only, as its permission says.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

const help = `agcore-tool: 1
name: wordcount
description: Counts the lines, words and bytes of a file in the workspace and lists its most frequent words.
permission: read-only
idempotent: true
param: --path string required | the file, relative to the workspace
param: --top integer default=3 | how many of the most frequent words to list
`

// result is the JSON result object agcore reads.
type result struct {
	Content  string         `json:"content"`
	Error    bool           `json:"error,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--help" {
		fmt.Print(help)
		return
	}
	fs := flag.NewFlagSet("wordcount", flag.ContinueOnError)
	path := fs.String("path", "", "the file, relative to the workspace")
	top := fs.Int("top", 3, "how many of the most frequent words to list")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	answer(count(*path, *top))
}

// count reads path and describes it.
func count(path string, top int) result {
	data, err := os.ReadFile(path)
	if err != nil {
		return result{Content: fmt.Sprintf("cannot read %s: %v", path, err), Error: true}
	}
	words := strings.Fields(string(data))
	freq := map[string]int{}
	for _, w := range words {
		freq[strings.ToLower(strings.Trim(w, ".,;:!?\"'()#*`"))]++
	}
	delete(freq, "")
	ranked := make([]string, 0, len(freq))
	for w := range freq {
		ranked = append(ranked, w)
	}
	slices.SortFunc(ranked, func(a, b string) int {
		if freq[a] != freq[b] {
			return freq[b] - freq[a]
		}
		return strings.Compare(a, b)
	})
	ranked = ranked[:min(top, len(ranked))]
	most := make([]string, len(ranked))
	for i, w := range ranked {
		most[i] = fmt.Sprintf("%s (%d)", w, freq[w])
	}
	lines := strings.Count(string(data), "\n")
	return result{
		Content: fmt.Sprintf("%s: %d lines, %d words, %d bytes; most frequent: %s",
			path, lines, len(words), len(data), strings.Join(most, ", ")),
		Metadata: map[string]any{"lines": lines, "words": len(words), "bytes": len(data), "top": ranked},
	}
}

func answer(r result) {
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		os.Exit(1)
	}
}
