package plan

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// PlanParser turns the text a model wrote into a Plan. Implementations must
// be safe for concurrent use. Parse returns a plan that passes Validate,
// with every step Pending, or an error; a *PlanError when the text is at
// fault, so the caller can show the model what to fix. When the text names
// no goal, the plan's Goal is empty and the caller fills it in.
type PlanParser interface {
	Parse(text string) (*Plan, error)
}

// DefaultMaxSteps is the step limit of a JSONParser whose MaxSteps is zero.
const DefaultMaxSteps = 50

// JSONParser is a PlanParser for the JSON format Instructions describes.
// It accepts
//
//	{"goal": "...", "steps": [{"description": "...", "agent": "...", "depends_on": [0], "independent": true}, ...]}
//
// where only "steps" and each "description" are required, or a bare array
// of such step objects, or a bare array of description strings (the two may
// be mixed). The value may sit in a ```json code fence and among prose; the
// first top-level JSON object or array is used. Unknown fields are errors.
//
// The zero value is ready to use and safe for concurrent use.
type JSONParser struct {
	// MaxSteps caps the number of steps in a plan. Zero or negative means
	// DefaultMaxSteps.
	MaxSteps int
	// IDs returns the ID of each parsed plan; it must be safe for concurrent
	// use. Nil means random 24-digit hex ids.
	IDs func() string
}

var _ PlanParser = JSONParser{}

var (
	planFields = []string{"goal", "steps"}
	stepFields = []string{"description", "agent", "depends_on", "independent"}
)

// Parse implements PlanParser.
func (jp JSONParser) Parse(text string) (*Plan, error) {
	raw, err := extract(text)
	if err != nil {
		return nil, err
	}
	var goal string
	list := raw
	if raw[0] == '{' {
		if goal, list, err = decodeEnvelope(raw); err != nil {
			return nil, err
		}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(list, &elems); err != nil {
		return nil, &PlanError{Step: -1, Field: "steps", Problem: "must be an array of steps", Err: err}
	}
	if len(elems) == 0 {
		return nil, &PlanError{Step: -1, Field: "steps", Problem: "the plan has no steps"}
	}
	if limit := jp.maxSteps(); len(elems) > limit {
		return nil, &PlanError{Step: -1, Field: "steps", Problem: fmt.Sprintf("the plan has %d steps, more than the limit of %d", len(elems), limit)}
	}
	steps := make([]Step, len(elems))
	for i, e := range elems {
		if steps[i], err = decodeStep(i, e); err != nil {
			return nil, err
		}
	}
	for i, s := range steps {
		if err := checkDeps(i, s.DependsOn, len(steps)); err != nil {
			return nil, err
		}
	}
	return &Plan{ID: jp.newID(), Goal: goal, Steps: steps}, nil
}

func (jp JSONParser) maxSteps() int {
	if jp.MaxSteps <= 0 {
		return DefaultMaxSteps
	}
	return jp.MaxSteps
}

func (jp JSONParser) newID() string {
	if jp.IDs != nil {
		return jp.IDs()
	}
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// decodeEnvelope splits a {"goal": ..., "steps": [...]} object.
func decodeEnvelope(raw json.RawMessage) (goal string, steps json.RawMessage, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", nil, &PlanError{Step: -1, Problem: "must be a JSON object", Err: err}
	}
	if err := unknownFields(-1, m, planFields); err != nil {
		return "", nil, err
	}
	if g, ok := m["goal"]; ok {
		if err := json.Unmarshal(g, &goal); err != nil {
			return "", nil, &PlanError{Step: -1, Field: "goal", Problem: "must be a string", Err: err}
		}
	}
	steps, ok := m["steps"]
	if !ok {
		return "", nil, &PlanError{Step: -1, Field: "steps", Problem: "is missing"}
	}
	return strings.TrimSpace(goal), steps, nil
}

// decodeStep decodes element i of the steps array: a description string or
// a step object.
func decodeStep(i int, raw json.RawMessage) (Step, error) {
	s := Step{Index: i}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &s.Description); err != nil {
			return s, &PlanError{Step: i, Field: "description", Problem: "must be a string", Err: err}
		}
	case '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return s, &PlanError{Step: i, Problem: "must be a JSON object", Err: err}
		}
		if err := unknownFields(i, m, stepFields); err != nil {
			return s, err
		}
		fields := []struct {
			name, want string
			dst        any
		}{
			{"description", "must be a string", &s.Description},
			{"agent", "must be a string", &s.Agent},
			{"depends_on", "must be an array of step indices", &s.DependsOn},
			{"independent", "must be true or false", &s.Independent},
		}
		for _, f := range fields {
			if v, ok := m[f.name]; ok {
				if err := json.Unmarshal(v, f.dst); err != nil {
					return s, &PlanError{Step: i, Field: f.name, Problem: f.want, Err: err}
				}
			}
		}
	default:
		return s, &PlanError{Step: i, Problem: "must be a description string or a step object"}
	}
	s.Description = strings.TrimSpace(s.Description)
	s.Agent = strings.TrimSpace(s.Agent)
	if s.Description == "" {
		return s, &PlanError{Step: i, Field: "description", Problem: "is missing or blank"}
	}
	if len(s.DependsOn) == 0 {
		s.DependsOn = nil
	}
	return s, nil
}

// unknownFields returns a *PlanError naming the keys of m outside allowed.
func unknownFields(step int, m map[string]json.RawMessage, allowed []string) error {
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	problem := "unknown field"
	if len(unknown) > 1 {
		quoted := make([]string, len(unknown))
		for k, u := range unknown {
			quoted[k] = fmt.Sprintf("%q", u)
		}
		problem = "unknown fields " + strings.Join(quoted, ", ")
	}
	return &PlanError{Step: step, Field: unknown[0], Problem: problem + "; the allowed fields are " + strings.Join(allowed, ", ")}
}
