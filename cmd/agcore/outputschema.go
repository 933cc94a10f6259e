package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/actors"
)

// readOutputSchema reads the --output-schema file into the submission
// option that asks for it; "" means none. The schema is named after the
// file ("invoice.schema.json" is "invoice"). A file that cannot be read
// or is not JSON is a usage error.
func readOutputSchema(path string) (actors.SubmitOption, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--output-schema: %w", err)}
	}
	if !json.Valid(data) {
		return nil, &usageError{fmt.Errorf("--output-schema %s: the file is not valid JSON", path)}
	}
	name, _, _ := strings.Cut(filepath.Base(path), ".")
	return actors.WithOutputSchema(name, json.RawMessage(data)), nil
}
