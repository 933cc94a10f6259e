package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// The helper protocol. The parent starts the helper (the program, again)
// with helperEnv set and two inherited pipes: it writes the spec as JSON
// into specFD and closes it; the helper confines itself, writes one status
// line into statusFD ("confined N", N the Landlock ABI in force) and
// executes the command, which closes statusFD. A helper that cannot
// confine the command writes "error <text>" instead and exits. A program
// that does not call Main writes nothing.
const (
	helperEnv   = "AGCORE_SANDBOX_HELPER"
	helperValue = "1"
	specFD      = 3
	statusFD    = 4
	// maxSpec bounds the spec the helper reads.
	maxSpec = 4 << 20
	// maxStatus bounds the status the parent reads.
	maxStatus = 4 << 10
)

// helperArg is the argument the helper is started with. A program that
// does not call Main sees it instead: a Go test binary runs no test.
const helperArg = "-test.run=^$"

// spec is a confined command as the parent sends it to the helper.
type spec struct {
	// Path is the program to execute, absolute.
	Path string `json:"path"`
	// Args is its argv, Args[0] included.
	Args []string `json:"args"`
	// Env is its complete environment.
	Env []string `json:"env"`
	// Read are the hierarchies it may read and execute.
	Read []string `json:"read"`
	// List are directories it may list (their hierarchies), but not read
	// files in.
	List []string `json:"list"`
	// Write are the hierarchies it may read and write.
	Write []string `json:"write"`
	// Ports are the TCP ports it may connect to.
	Ports []int `json:"ports"`
}

// validate checks what the helper relies on.
func (s spec) validate() error {
	if !filepath.IsAbs(s.Path) || strings.ContainsRune(s.Path, 0) {
		return fmt.Errorf("path %q is not an absolute path", s.Path)
	}
	if len(s.Args) == 0 {
		return errors.New("args is empty")
	}
	for _, a := range s.Args {
		if strings.ContainsRune(a, 0) {
			return errors.New("args: an argument contains a NUL byte")
		}
	}
	for _, e := range s.Env {
		if strings.ContainsRune(e, 0) || !strings.Contains(e, "=") {
			return fmt.Errorf("env: %q is not NAME=value", e)
		}
	}
	for _, f := range []struct {
		name  string
		paths []string
	}{{"read", s.Read}, {"list", s.List}, {"write", s.Write}} {
		for _, p := range f.paths {
			if err := checkPath(p); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
	}
	for _, p := range s.Ports {
		if p < 1 || p > 65535 {
			return fmt.Errorf("ports: %d is not a TCP port", p)
		}
	}
	return nil
}

// encode is the spec as the helper reads it.
func (s spec) encode() ([]byte, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("sandbox: encode spec: %w", err)
	}
	if len(data) > maxSpec {
		return nil, fmt.Errorf("sandbox: the command's spec is larger than %d bytes", maxSpec)
	}
	return data, nil
}

// decodeSpec reads and validates a spec.
func decodeSpec(r io.Reader) (spec, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSpec+1))
	if err != nil {
		return spec{}, fmt.Errorf("read spec: %w", err)
	}
	if len(data) > maxSpec {
		return spec{}, fmt.Errorf("spec is larger than %d bytes", maxSpec)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s spec
	if err := dec.Decode(&s); err != nil {
		return spec{}, fmt.Errorf("decode spec: %w", err)
	}
	if dec.More() {
		return spec{}, errors.New("decode spec: trailing data")
	}
	if err := s.validate(); err != nil {
		return spec{}, fmt.Errorf("spec: %w", err)
	}
	return s, nil
}

// errNoAnswer is parseStatus's error when the helper wrote nothing: the
// program did not call Main, or died before it could answer.
var errNoAnswer = errors.New("the helper did not answer")

// parseStatus reads what the helper wrote into its status pipe: the
// Landlock ABI in force, or the helper's error. The last line decides, so
// that a failed exec after "confined N" is an error.
func parseStatus(b []byte) (abi int, err error) {
	text := strings.TrimRight(string(b), "\n")
	if text == "" {
		return 0, errNoAnswer
	}
	line := text[strings.LastIndexByte(text, '\n')+1:]
	verb, arg, _ := strings.Cut(line, " ")
	switch verb {
	case "confined":
		n, err := strconv.Atoi(arg)
		if err != nil || n < MinABI {
			return 0, fmt.Errorf("the helper answered %q", line)
		}
		return n, nil
	case "error":
		if arg == "" {
			arg = "unknown error"
		}
		return 0, errors.New(arg)
	}
	return 0, fmt.Errorf("the helper answered %q", strings.ToValidUTF8(line, "?"))
}
