package toolsys_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// GreetParams is both the schema the model sees and the parser of its
// arguments.
type GreetParams struct {
	Name  string `json:"name" jsonschema:"description=Who to greet"`
	Style string `json:"style,omitempty" jsonschema:"enum=plain,enum=loud"`
}

// Greet is a typed tool.
type Greet struct{}

func (Greet) Name() string                   { return "greet" }
func (Greet) Description() string            { return "Greets someone." }
func (Greet) Permission() toolsys.Permission { return toolsys.PermNone }
func (Greet) SecretParams() []string         { return nil }
func (Greet) Execute(_ context.Context, p GreetParams, _ *toolsys.Context) (toolsys.Result, error) {
	msg := "hello, " + p.Name
	if p.Style == "loud" {
		msg = strings.ToUpper(msg) + "!"
	}
	return toolsys.Result{Content: msg}, nil
}

func ExampleBridge() {
	tool := toolsys.Bridge[GreetParams](Greet{})
	fmt.Println(string(tool.Schema()))

	res, _ := tool.Execute(context.Background(), json.RawMessage(`{"name":"Ada","style":""}`), nil)
	fmt.Println(res.Content)

	res, _ = tool.Execute(context.Background(), json.RawMessage(`{"name":"Ada","style":"shout"}`), nil)
	fmt.Println(res.IsError, res.Content)
	// Output:
	// {"additionalProperties":false,"properties":{"name":{"description":"Who to greet","type":"string"},"style":{"enum":["plain","loud"],"type":"string"}},"required":["name"],"type":"object"}
	// hello, Ada
	// true invalid arguments for tool greet: field "style": must be one of ["plain","loud"], got "shout"
}

func ExampleRegistry() {
	reg := toolsys.NewRegistry(toolsys.Config{})
	toolsys.MustRegisterTyped[GreetParams](reg, Greet{}, toolsys.WithTags("demo"))

	res, _ := reg.Call(context.Background(), "greet", json.RawMessage(`{"name":"Grace","style":"loud"}`), &toolsys.Context{CallID: "call_1"})
	fmt.Println(res.Content)

	res, _ = reg.Call(context.Background(), "gret", json.RawMessage(`{}`), nil)
	fmt.Println(res.Content)

	for _, d := range reg.Definitions() {
		fmt.Println(d.Name, "-", d.Description)
	}
	// Output:
	// HELLO, GRACE!
	// unknown tool "gret"; available tools: greet
	// greet - Greets someone.
}
