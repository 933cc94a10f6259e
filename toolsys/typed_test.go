package toolsys

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fixtures shared by the package's tests.

type item struct {
	Label string `json:"label" jsonschema:"description=What the item is called"`
	Count int    `json:"count,omitempty" jsonschema:"minimum=1"`
}

type searchParams struct {
	Query  string   `json:"query" jsonschema:"description=Text to look for"`
	Mode   string   `json:"mode,omitempty" jsonschema:"enum=fast,enum=slow"`
	Limit  int      `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100"`
	Items  []item   `json:"items,omitempty"`
	Nested [][]item `json:"nested,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	Exact  bool     `json:"exact,omitempty"`
}

// searchTool records the parameters it was called with.
type searchTool struct {
	perm      Permission
	got       chan searchParams
	precheck  func(searchParams) error
	idem      *bool
	secretPar []string
}

func (s *searchTool) Name() string           { return "search" }
func (s *searchTool) Description() string    { return "Search things." }
func (s *searchTool) Permission() Permission { return s.perm }
func (s *searchTool) SecretParams() []string { return s.secretPar }
func (s *searchTool) Execute(_ context.Context, p searchParams, _ *Context) (Result, error) {
	if s.got != nil {
		s.got <- p
	}
	return Result{Content: "found " + p.Query}, nil
}

type precheckedSearch struct{ *searchTool }

func (p precheckedSearch) Precheck(sp searchParams) error { return p.precheck(sp) }

type idempotentSearch struct{ *searchTool }

func (i idempotentSearch) Idempotent() bool { return *i.idem }

func TestBridge_ExecuteDecodesParams(t *testing.T) {
	st := &searchTool{got: make(chan searchParams, 1)}
	tool := Bridge[searchParams](st)
	res, err := tool.Execute(context.Background(), json.RawMessage(`{"query":"q","mode":"fast","items":[{"label":"a","count":2}],"tags":["x"]}`), nil)
	if err != nil || res.IsError {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	want := searchParams{Query: "q", Mode: "fast", Items: []item{{Label: "a", Count: 2}}, Tags: []string{"x"}}
	if diff := cmp.Diff(want, <-st.got); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
}

func TestBridge_InvalidArgumentsAreIsError(t *testing.T) {
	st := &searchTool{got: make(chan searchParams, 1)}
	tool := Bridge[searchParams](st)
	tests := []struct {
		name, args string
		want       []string
	}{
		{"missing required", `{}`, []string{`field "query": is required but missing`}},
		{"enum", `{"query":"q","mode":"x"}`, []string{`field "mode": must be one of ["fast","slow"], got "x"`}},
		{"unknown", `{"query":"q","foo":1}`, []string{`unknown field "foo"`, `"query"`}},
		{"type", `{"query":"q","limit":"3"}`, []string{`field "limit": expected integer, got string "3"`}},
		{"minimum", `{"query":"q","limit":0}`, []string{`field "limit": must be >= 1, got 0`}},
		{"maximum", `{"query":"q","limit":101}`, []string{`field "limit": must be <= 100, got 101`}},
		{"fraction for integer", `{"query":"q","limit":1.5}`, []string{`field "limit": expected integer, got number 1.5`}},
		{"nested", `{"query":"q","nested":[[{"label":1}]]}`, []string{`field "nested[0][0].label": expected string, got number 1`}},
		{"nested unknown", `{"query":"q","items":[{"label":"a","zz":1}]}`, []string{`unknown field "items[0].zz"`, `"count", "label"`}},
		{"truncated", `{"query":"q`, []string{`arguments are not valid JSON: unexpected end of input at offset 11`}},
		{"garbage", `{"query" 1}`, []string{`arguments are not valid JSON: invalid character '1' after object key at offset`}},
		{"trailing", `{"query":"q"}}`, []string{`unexpected data after the object at offset 13`}},
		{"not an object", `["q"]`, []string{`arguments must be a JSON object, got array`}},
		{"out of range for Go int", `{"query":"q","items":[{"label":"a","count":1e400}]}`, []string{`field "items.count"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Execute(context.Background(), json.RawMessage(tt.args), nil)
			if err != nil {
				t.Fatalf("Execute error = %v", err)
			}
			if !res.IsError {
				t.Fatalf("Execute = %+v, want IsError", res)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content %q does not contain %q", res.Content, w)
				}
			}
			select {
			case p := <-st.got:
				t.Errorf("tool ran with %+v", p)
			default:
			}
		})
	}
}

func TestBridge_EmptyArgumentsMeanNoArguments(t *testing.T) {
	type none struct{}
	tool := Bridge[none](typedFunc[none](func(none) (Result, error) { return Result{Content: "ok"}, nil }))
	for _, args := range []string{``, `  `, `null`, `{}`} {
		res, err := tool.Execute(context.Background(), json.RawMessage(args), nil)
		if err != nil || res.IsError || res.Content != "ok" {
			t.Errorf("Execute(%q) = %+v, %v", args, res, err)
		}
	}
}

func TestBridge_Precheck(t *testing.T) {
	st := &searchTool{got: make(chan searchParams, 1), precheck: func(p searchParams) error {
		if strings.HasPrefix(p.Query, "-") {
			return errors.New("query must not start with '-'")
		}
		return nil
	}}
	tool := Bridge[searchParams](precheckedSearch{st})
	res, err := tool.Execute(context.Background(), json.RawMessage(`{"query":"-rf"}`), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "query must not start with '-'") {
		t.Fatalf("Execute = %+v, %v; want precheck rejection", res, err)
	}
	if len(st.got) != 0 {
		t.Error("tool ran after a failed precheck")
	}
	if res, _ := tool.Execute(context.Background(), json.RawMessage(`{"query":"ok"}`), nil); res.IsError {
		t.Errorf("valid call rejected: %+v", res)
	}
}

func TestBridge_Idempotent(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		tool Tool
		want bool
	}{
		{"read-only by default", Bridge[searchParams](&searchTool{perm: PermReadOnly}), true},
		{"none by default", Bridge[searchParams](&searchTool{perm: PermNone}), true},
		{"write by default", Bridge[searchParams](&searchTool{perm: PermWrite}), false},
		{"declared idempotent write", Bridge[searchParams](idempotentSearch{&searchTool{perm: PermWrite, idem: &yes}}), true},
		{"declared non-idempotent read", Bridge[searchParams](idempotentSearch{&searchTool{perm: PermReadOnly, idem: &no}}), false},
	}
	for _, tt := range tests {
		if got := tt.tool.Idempotent(); got != tt.want {
			t.Errorf("%s: Idempotent() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBridge_PointerParams(t *testing.T) {
	var got *item
	tool := Bridge[*item](typedFunc[*item](func(p *item) (Result, error) { got = p; return Result{}, nil }))
	if _, err := tool.Execute(context.Background(), json.RawMessage(`{"label":"x"}`), nil); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Label != "x" {
		t.Errorf("params = %+v", got)
	}
}

func TestBridge_PanicsOnUnreflectableParams(t *testing.T) {
	type recursive struct {
		Name     string      `json:"name"`
		Children []recursive `json:"children,omitempty"`
	}
	type withChan struct {
		C chan int `json:"c"`
	}
	tests := []struct {
		name string
		make func()
		want string
	}{
		{"recursive", func() { Bridge[recursive](typedFunc[recursive](nil)) }, `recursive type "recursive"`},
		{"channel", func() { Bridge[withChan](typedFunc[withChan](nil)) }, "cannot reflect the schema"},
		{"not a struct", func() { Bridge[string](typedFunc[string](nil)) }, "must be a struct"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), tt.want) || !strings.Contains(r.(string), `"func"`) {
					t.Errorf("panic = %v, want one containing %q and the tool name", r, tt.want)
				}
			}()
			tt.make()
		})
	}
}

type subjectTool struct{ *searchTool }

func (subjectTool) RuleSubject(p searchParams, _ *Context) string { return p.Query }

func TestBridge_RuleSubject(t *testing.T) {
	plain := Bridge[searchParams](&searchTool{}).(RuleSubjecter)
	if got := plain.RuleSubject(json.RawMessage(`{ "query" : "a/b" }`), nil); got != `{"query":"a/b"}` {
		t.Errorf("default subject = %q", got)
	}
	typed := Bridge[searchParams](subjectTool{&searchTool{}}).(RuleSubjecter)
	if got := typed.RuleSubject(json.RawMessage(`{"query":"git status"}`), nil); got != "git status" {
		t.Errorf("typed subject = %q", got)
	}
	if got := typed.RuleSubject(json.RawMessage(`{"query":3}`), nil); got != `{"query":3}` {
		t.Errorf("subject of invalid args = %q, want the compact JSON", got)
	}
}

type multiSubjectTool struct{ *searchTool }

func (multiSubjectTool) RuleSubjects(p searchParams, _ *Context) Subjects {
	return Subjects{Parts: strings.Split(p.Query, ";")}
}

func TestBridge_RuleSubjects(t *testing.T) {
	tests := []struct {
		name string
		tool Typed[searchParams]
		args string
		want Subjects
	}{
		{"typed tool asked", multiSubjectTool{&searchTool{}}, `{"query":"a;b"}`, Subjects{Parts: []string{"a", "b"}}},
		{"invalid arguments give the whole subject", multiSubjectTool{&searchTool{}}, `{"query":3}`, Subjects{}},
		{"tool without parts", &searchTool{}, `{"query":"a;b"}`, Subjects{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Bridge[searchParams](tt.tool).(MultiRuleSubjecter).RuleSubjects(json.RawMessage(tt.args), nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RuleSubjects (-want +got):\n%s", diff)
			}
		})
	}
}

// typedFunc is a Typed tool named "func" made from a function.
type typedFunc[P any] func(P) (Result, error)

func (typedFunc[P]) Name() string           { return "func" }
func (typedFunc[P]) Description() string    { return "A function." }
func (typedFunc[P]) Permission() Permission { return PermNone }
func (typedFunc[P]) SecretParams() []string { return nil }
func (f typedFunc[P]) Execute(_ context.Context, p P, _ *Context) (Result, error) {
	return f(p)
}
