package wasm_test

import (
	"fmt"
	"strings"

	"github.com/agcore/agcore/toolsys/wasm"
)

func ExampleParseHelp() {
	help := `agcore-tool: 1
name: codec
description: Encodes text as base64 or hex, or decodes it back.
permission: none
param: --mode string required enum=encode enum=decode | encode or decode the input
param: --input string required | the text to transform
param: --upper boolean | upper-case hex digits
`
	h, err := wasm.ParseHelp("codec.wasm", []byte(help))
	if err != nil {
		fmt.Println(err)
		return
	}
	schema, _ := h.Schema()
	fmt.Println(h.Name, h.Permission)
	fmt.Println(string(schema))
	argv, _ := h.Args(map[string]any{"mode": "encode", "input": "hi", "upper": true})
	fmt.Println(strings.Join(argv, " "))

	_, err = wasm.ParseHelp("codec.wasm", []byte(strings.Replace(help, "boolean", "bool", 1)))
	fmt.Println(err)
	// Output:
	// codec none
	// {"additionalProperties":false,"properties":{"input":{"description":"the text to transform","type":"string"},"mode":{"description":"encode or decode the input","enum":["encode","decode"],"type":"string"},"upper":{"description":"upper-case hex digits","type":"boolean"}},"required":["mode","input"],"type":"object"}
	// --mode encode --input hi --upper
	// codec.wasm: --help line 7: param --upper: unknown type "bool" (want string, integer, number, boolean or array)
}
