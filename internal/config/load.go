package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Load reads the configuration file at path, fills in the defaults of what
// it leaves out and validates it. A file that is not valid YAML, has a key
// agcore does not know, a value of the wrong type or a value that fails
// validation gives an *Error whose problems name the file, the line and
// the key. Relative paths in the file (workspace, data_dir, a provider's
// script) are relative to the file's directory.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse is Load for data already read; name is the file name errors show
// and the base of relative paths.
func Parse(name string, data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{Problems: []Problem{yamlProblem(name, err)}}
	}
	cfg := &Config{}
	pos := positions{}
	if len(doc.Content) > 0 {
		var problems []Problem
		checkKeys(doc.Content[0], reflect.TypeFor[Config](), "", pos, &problems)
		if len(problems) > 0 {
			return nil, pos.locate(name, problems)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
			return nil, decodeError(name, err, pos)
		}
	}
	cfg.fillDefaults()
	cfg.resolvePaths(filepath.Dir(name))
	if problems := cfg.validate(); len(problems) > 0 {
		return nil, pos.locate(name, problems)
	}
	return cfg, nil
}

// resolvePaths makes the file's relative paths relative to dir, and
// expands a leading "~/".
func (c *Config) resolvePaths(dir string) {
	fix := func(p string) string {
		if p == "" {
			return p
		}
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				return filepath.Join(home, rest)
			}
		}
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	c.DataDir = fix(c.DataDir)
	c.Workspace = fix(c.Workspace)
	c.WASM.Dir = fix(c.WASM.Dir)
	c.Skills.Dir = fix(c.Skills.Dir)
	for i := range c.Providers {
		c.Providers[i].Script = fix(c.Providers[i].Script)
	}
	for i := range c.MCPServers {
		c.MCPServers[i].Dir = fix(c.MCPServers[i].Dir)
	}
}

// positions maps the path of every key of a file ("agents[1].model") to
// its line.
type positions map[string]int

func (p positions) add(path string, line int) {
	if _, ok := p[path]; !ok {
		p[path] = line
	}
}

// line returns the line of key, or of its nearest ancestor in the file.
func (p positions) line(key string) int {
	for key != "" {
		if l, ok := p[key]; ok {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

// keyAt returns the deepest key on line.
func (p positions) keyAt(line int) string {
	best := ""
	for k, l := range p {
		if l == line && (len(k) > len(best) || len(k) == len(best) && k < best) {
			best = k
		}
	}
	return best
}

// locate fills in the file and line of problems and sorts them by line.
func (p positions) locate(file string, problems []Problem) *Error {
	for i := range problems {
		problems[i].File = file
		if problems[i].Line == 0 {
			problems[i].Line = p.line(problems[i].Key)
		}
	}
	slices.SortStableFunc(problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), strings.Compare(a.Key, b.Key))
	})
	return &Error{Problems: problems}
}

var durationType = reflect.TypeFor[time.Duration]()

// checkKeys walks node against the Go type t, records the line of every
// key, and reports the keys t does not have.
func checkKeys(n *yaml.Node, t reflect.Type, path string, pos positions, problems *[]Problem) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && t != durationType && n.Kind == yaml.MappingNode:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				continue
			}
			child := join(path, k.Value)
			pos.add(child, k.Line)
			f, ok := fields[k.Value]
			if !ok {
				*problems = append(*problems, Problem{Line: k.Line, Key: child, Msg: unknownKeyMsg(k.Value, t)})
				continue
			}
			checkKeys(v, f.Type, child, pos, problems)
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			child := join(path, n.Content[i].Value)
			pos.add(child, n.Content[i].Line)
			checkKeys(n.Content[i+1], t.Elem(), child, pos, problems)
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			child := fmt.Sprintf("%s[%d]", path, i)
			pos.add(child, item.Line)
			checkKeys(item, t.Elem(), child, pos, problems)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields returns the fields of struct t by their YAML key.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

// unknownKeyMsg says that key is not a key of t, suggesting the closest
// known key.
func unknownKeyMsg(key string, t reflect.Type) string {
	var known []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			known = append(known, name)
		}
	}
	msg := "unknown key"
	best, bestDist := "", 3
	for _, k := range known {
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf("; did you mean %q?", best)
	}
	return msg + " (known: " + strings.Join(known, ", ") + ")"
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

var (
	yamlLineRE   = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	typeLineRE   = regexp.MustCompile(`^line (\d+): (.*)$`)
	unmarshalRE  = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (.+)$")
	friendlyType = map[string]string{
		"int": "an integer", "int64": "an integer", "float64": "a number", "string": "a string",
		"bool": "true or false", "time.Duration": `a duration such as "30s" or "1m30s"`,
		"[]string": "a list of strings", "map[string]string": "a mapping of strings",
	}
)

// yamlProblem turns a YAML syntax error into a Problem.
func yamlProblem(file string, err error) Problem {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Problem{File: file, Line: line, Msg: "invalid YAML: " + m[2]}
	}
	return Problem{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// decodeError turns the decoder's type errors into an *Error.
func decodeError(file string, err error, pos positions) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return &Error{Problems: []Problem{yamlProblem(file, err)}}
	}
	var problems []Problem
	for _, s := range te.Errors {
		p := Problem{Msg: s}
		if m := typeLineRE.FindStringSubmatch(s); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			p.Key = pos.keyAt(p.Line)
			p.Msg = friendlyTypeMsg(m[2])
		}
		problems = append(problems, p)
	}
	return pos.locate(file, problems)
}

// friendlyTypeMsg rewrites "cannot unmarshal !!str `abc` into int" as
// `want an integer, got "abc"`.
func friendlyTypeMsg(msg string) string {
	m := unmarshalRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want, ok := friendlyType[m[3]]
	if !ok {
		switch {
		case strings.HasPrefix(m[3], "[]"):
			want = "a list"
		default:
			want = "a mapping"
		}
	}
	got := strconv.Quote(m[2])
	switch m[1] {
	case "seq":
		got = "a list"
	case "map":
		got = "a mapping"
	}
	return fmt.Sprintf("want %s, got %s", want, got)
}
