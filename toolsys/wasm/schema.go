package wasm

import (
	"encoding/json"
	"fmt"

	"github.com/agcore/agcore/toolsys"
)

// Schema returns the JSON Schema of the arguments h declares, normalised
// like every other tool's (toolsys.NormalizeSchema): an object with one
// property per parameter (type, description, enum, default; an array's
// items), the required ones listed, and no other property allowed.
func (h *Help) Schema() (json.RawMessage, error) {
	props := make(map[string]any, len(h.Params))
	required := []string{}
	for _, p := range h.Params {
		props[p.Name] = p.schema()
		if p.Required {
			required = append(required, p.Name)
		}
	}
	doc := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		doc["required"] = required
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return toolsys.NormalizeSchema(raw)
}

// schema is the property schema of p.
func (p Param) schema() map[string]any {
	s := map[string]any{"type": string(p.Type)}
	if p.Description != "" {
		s["description"] = p.Description
	}
	if p.Default != nil {
		s["default"] = p.Default
	}
	if p.Type != TypeArray {
		if p.Enum != nil {
			s["enum"] = p.Enum
		}
		return s
	}
	items := map[string]any{"type": string(p.Items)}
	if p.Enum != nil {
		items["enum"] = p.Enum
	}
	s["items"] = items
	return s
}

// secretParams lists the parameters declared secret.
func (h *Help) secretParams() []string {
	var out []string
	for _, p := range h.Params {
		if p.Secret {
			out = append(out, p.Name)
		}
	}
	return out
}
