package actors

// This file holds Prompts, the registry of prompt templates.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"
)

// ErrUnknownPrompt is wrapped by the errors about a prompt template that
// is not in the registry: rendered by name, or named by {{template}}.
var ErrUnknownPrompt = errors.New("actors: unknown prompt template")

// PromptExts are the extensions of the files LoadDir and LoadFS read as
// prompt templates.
var PromptExts = []string{".tmpl", ".tpl", ".txt", ".md"}

// Prompts is a registry of text/template prompts that share one namespace:
// any template, and any {{define}} block of any file, can be used from the
// others with {{template "name" .}}, so that partials (a header, the house
// rules) are written once. Set it as Config.Prompts and agent prompts and
// the base prompt can use them too. A variable the data lacks is an error
// (missingkey=error), never "<no value>"; a {{template}} of a name the
// registry lacks is refused when it is added.
//
// Add templates (Add, LoadDir, LoadFS) before use; Render is safe for
// concurrent use. The zero Prompts is not usable: call NewPrompts.
type Prompts struct {
	mu    sync.RWMutex
	set   *template.Template
	files map[string]string // template name -> where it was defined
}

// NewPrompts returns an empty registry.
func NewPrompts() *Prompts {
	return &Prompts{set: template.New("").Option("missingkey=error"), files: map[string]string{}}
}

// Add registers text as the template name, with the {{define}} blocks it
// holds. It fails when name or a block is taken, when text does not parse,
// or when it names a template the registry lacks (ErrUnknownPrompt).
func (p *Prompts) Add(name, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.add(name, text, "template "+name)
}

// LoadDir registers every file of dir whose extension is one of
// PromptExts, named by the file name without its extension
// ("coder.tmpl" is "coder"), with the {{define}} blocks they hold. Files
// may use each other's templates whatever the order they load in.
// Subdirectories are not read.
func (p *Prompts) LoadDir(dir string) error {
	return p.LoadFS(os.DirFS(dir), ".", dir)
}

// LoadFS is LoadDir for the directory dir of fsys. where, when given,
// names the directory in errors.
func (p *Prompts) LoadFS(fsys fs.FS, dir string, where ...string) error {
	shown := dir
	if len(where) > 0 {
		shown = where[0]
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return fmt.Errorf("prompts %s: %w", shown, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// Parse every file first, so that references between files resolve
	// whatever their order; then check them.
	trial, err := p.set.Clone()
	if err != nil {
		return fmt.Errorf("prompts %s: %w", shown, err)
	}
	files := map[string]string{}
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if e.IsDir() || !slices.Contains(PromptExts, ext) {
			continue
		}
		file := path.Join(shown, e.Name())
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("prompts: %w", err)
		}
		if err := parseInto(trial, strings.TrimSuffix(e.Name(), ext), string(data), file, p.files, files); err != nil {
			return err
		}
	}
	if err := checkRefs(trial); err != nil {
		return fmt.Errorf("prompts %s: %w", shown, err)
	}
	p.set = trial
	for name, where := range files {
		p.files[name] = where
	}
	return nil
}

// add parses text as name into the registry; the caller holds p.mu.
func (p *Prompts) add(name, text, where string) error {
	trial, err := p.set.Clone()
	if err != nil {
		return fmt.Errorf("prompt %q: %w", name, err)
	}
	files := map[string]string{}
	if err := parseInto(trial, name, text, where, p.files, files); err != nil {
		return err
	}
	if err := checkRefs(trial); err != nil {
		return fmt.Errorf("prompt %q: %w", name, err)
	}
	p.set = trial
	for n, w := range files {
		p.files[n] = w
	}
	return nil
}

// parseInto parses text as the template name into set, refusing names
// that old or added (name -> where, updated) already hold.
func parseInto(set *template.Template, name, text, where string, old, added map[string]string) error {
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return fmt.Errorf("prompts: %s: %w", where, err)
	}
	for _, def := range t.Templates() {
		n := def.Name()
		if prev, ok := old[n]; ok {
			return fmt.Errorf("prompts: %s: template %q is already defined by %s", where, n, prev)
		}
		if prev, ok := added[n]; ok {
			return fmt.Errorf("prompts: %s: template %q is already defined by %s", where, n, prev)
		}
		if _, err := set.AddParseTree(n, def.Tree); err != nil {
			return fmt.Errorf("prompts: %s: %w", where, err)
		}
		added[n] = where
	}
	return nil
}

// Names returns the names of the registered templates, sorted.
func (p *Prompts) Names() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	names := make([]string, 0, len(p.files))
	for n := range p.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Render executes the template name with data. A name the registry lacks
// is ErrUnknownPrompt; a variable data lacks is an error naming it.
func (p *Prompts) Render(name string, data any) (string, error) {
	p.mu.RLock()
	t := p.set.Lookup(name)
	_, known := p.files[name]
	p.mu.RUnlock()
	if t == nil || !known {
		return "", fmt.Errorf("%w %q (known: %s)", ErrUnknownPrompt, name, strings.Join(p.Names(), ", "))
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("prompt %q: %w", name, err)
	}
	return b.String(), nil
}

// Check reports what is wrong with text as a prompt that may use the
// registry's templates, as New does for BasePrompt and agent prompts: a
// parse error, or ErrUnknownPrompt for a template the registry lacks. A
// nil registry has no templates.
func (p *Prompts) Check(text string) error {
	set, err := p.compiler()
	if err != nil {
		return err
	}
	_, err = compileIn(set, "prompt", text)
	return err
}

// compiler returns a template set holding a copy of the registry's
// templates, for New to compile the runtime's prompts in; nil p gives an
// empty set.
func (p *Prompts) compiler() (*template.Template, error) {
	if p == nil {
		return template.New("").Option("missingkey=error"), nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.set.Clone()
}

// compileIn parses text into set as the template name (a name no file can
// take, such as "agent coder"), and checks that the templates it names
// are in set.
func compileIn(set *template.Template, name, text string) (*template.Template, error) {
	t, err := set.New(name).Parse(text)
	if err != nil {
		return nil, err
	}
	if t.Tree != nil {
		if missing := undefinedRef(set, t.Tree.Root); missing != "" {
			return nil, fmt.Errorf("%w %q", ErrUnknownPrompt, missing)
		}
	}
	if err := checkRefs(set); err != nil {
		return nil, err
	}
	return t, nil
}

// checkRefs reports the first {{template}} of set that names a template
// set lacks, as ErrUnknownPrompt.
func checkRefs(set *template.Template) error {
	for _, t := range set.Templates() {
		if t.Tree == nil {
			continue
		}
		if missing := undefinedRef(set, t.Tree.Root); missing != "" {
			return fmt.Errorf("%w %q, used by template %q", ErrUnknownPrompt, missing, t.Name())
		}
	}
	return nil
}

// undefinedRef returns the first template that n names and set lacks.
func undefinedRef(set *template.Template, n parse.Node) string {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return ""
		}
		for _, c := range n.Nodes {
			if m := undefinedRef(set, c); m != "" {
				return m
			}
		}
	case *parse.TemplateNode:
		if t := set.Lookup(n.Name); t == nil || t.Tree == nil {
			return n.Name
		}
	case *parse.IfNode:
		return firstRef(set, n.List, n.ElseList)
	case *parse.RangeNode:
		return firstRef(set, n.List, n.ElseList)
	case *parse.WithNode:
		return firstRef(set, n.List, n.ElseList)
	}
	return ""
}

func firstRef(set *template.Template, lists ...*parse.ListNode) string {
	for _, l := range lists {
		if l == nil {
			continue
		}
		if m := undefinedRef(set, l); m != "" {
			return m
		}
	}
	return ""
}
