package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestExample_ShowsEveryKey fails when a key of the configuration file is
// missing from docs/agcore.example.yaml, which promises to show every key
// with its default. A key counts as shown where the file sets it (a key of
// a list's items when any item sets it, of a map's values when any value
// does), or where a comment shows it ("# key: value", for keys whose
// example would change what the file does, such as an MCP server).
func TestExample_ShowsEveryKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "agcore.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	collectKeys(doc.Content[0], "", shown)
	commented := map[string]bool{}
	for line := range strings.Lines(string(data)) {
		text, ok := strings.CutPrefix(strings.TrimSpace(line), "#")
		if !ok {
			continue
		}
		text = strings.TrimLeft(strings.TrimSpace(text), "#- ")
		if key, _, ok := strings.Cut(text, ":"); ok && key != "" && !strings.ContainsAny(key, " \t") {
			commented[key] = true
		}
	}
	// Keys the type has but validation refuses, so the example must not
	// show them.
	refused := map[string]bool{"agents[].limits.mid_turn": true}
	var missing []string
	for _, key := range configKeys(reflect.TypeFor[Config](), "") {
		if refused[key] {
			continue
		}
		leaf := key[strings.LastIndexAny(key, ".]")+1:]
		if !shown[key] && !commented[leaf] {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/agcore.example.yaml does not show these keys:\n  %s", strings.Join(missing, "\n  "))
	}
}

// collectKeys records the key paths of n, items of lists as "[]" and
// values of maps as "*".
func collectKeys(n *yaml.Node, path string, shown map[string]bool) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			child := join(path, n.Content[i].Value)
			shown[child] = true
			collectKeys(n.Content[i+1], child, shown)
			// The same key under a map's "*" (any value).
			if path != "" {
				wild := join(path, "*")
				collectKeys(n.Content[i+1], wild, shown)
			}
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			collectKeys(item, path+"[]", shown)
		}
	}
}

// configKeys returns the key paths of the struct t, as collectKeys writes
// them.
func configKeys(t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	switch {
	case t.Kind() == reflect.Struct && t != durationType:
		fields := yamlFields(t)
		names := slices.Sorted(func(yield func(string) bool) {
			for name := range fields {
				if !yield(name) {
					return
				}
			}
		})
		for _, name := range names {
			child := join(path, name)
			out = append(out, child)
			out = append(out, configKeys(fields[name].Type, child)...)
		}
	case t.Kind() == reflect.Slice:
		out = append(out, configKeys(t.Elem(), path+"[]")...)
	case t.Kind() == reflect.Map:
		out = append(out, configKeys(t.Elem(), join(path, "*"))...)
	}
	return out
}
