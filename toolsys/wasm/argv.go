package wasm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// Args maps validated arguments to the tool's command line, after the
// program name, in the order the parameters are declared: a string or a
// number is "--flag value", a boolean is a bare "--flag" when true and
// nothing when false, an array repeats "--flag item" for each item, and a
// parameter left out (or null) adds nothing. So {"mode":"encode",
// "input":"hi"} becomes --mode encode --input hi.
//
// A value that cannot travel on a command line (a string with a NUL byte)
// or whose type does not match the declaration yields toolsys.ArgumentErrors
// naming the field; arguments that passed the schema's validator never do
// the latter.
func (h *Help) Args(args map[string]any) ([]string, error) {
	var out []string
	for _, p := range h.Params {
		v, ok := args[p.Name]
		if !ok || v == nil {
			continue
		}
		if p.Type == TypeArray {
			items, ok := v.([]any)
			if !ok {
				return nil, argErr(p.Name, "expected array, got %T", v)
			}
			for i, it := range items {
				s, err := argText(p.Items, it)
				if err != nil {
					return nil, argErr(fmt.Sprintf("%s[%d]", p.Name, i), "%v", err)
				}
				out = append(out, "--"+p.Name, s)
			}
			continue
		}
		if p.Type == TypeBoolean {
			b, ok := v.(bool)
			if !ok {
				return nil, argErr(p.Name, "expected boolean, got %T", v)
			}
			if b {
				out = append(out, "--"+p.Name)
			}
			continue
		}
		s, err := argText(p.Type, v)
		if err != nil {
			return nil, argErr(p.Name, "%v", err)
		}
		out = append(out, "--"+p.Name, s)
	}
	return out, nil
}

// argText renders one scalar value of type t as a command-line argument.
func argText(t ParamType, v any) (string, error) {
	switch t {
	case TypeString:
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("expected string, got %T", v)
		}
		if strings.IndexByte(s, 0) >= 0 {
			return "", fmt.Errorf("contains a NUL byte, which cannot be passed on a command line")
		}
		return s, nil
	case TypeInteger, TypeNumber:
		switch n := v.(type) {
		case json.Number:
			return n.String(), nil
		case float64:
			return fmt.Sprint(n), nil
		}
		return "", fmt.Errorf("expected %s, got %T", t, v)
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			return "", fmt.Errorf("expected boolean, got %T", v)
		}
		if b {
			return "true", nil
		}
		return "false", nil
	}
	return "", fmt.Errorf("type %s cannot be passed", t)
}

func argErr(field, format string, args ...any) toolsys.ArgumentErrors {
	return toolsys.ArgumentErrors{{Field: field, Problem: fmt.Sprintf(format, args...)}}
}
