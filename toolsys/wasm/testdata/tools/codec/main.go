// Command codec is a WASM test tool: it encodes text as base64 or hex, or
// decodes it back, and prints the result as plain text.
package main

import (
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
)

const help = `agcore-tool: 1
name: codec
description: Encodes text as base64 or hex, or decodes it back.
permission: none
param: --mode string required enum=encode enum=decode | encode or decode the input
param: --input string required | the text to transform
param: --alphabet string default=base64 enum=base64 enum=hex | the encoding to use
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--help" {
		fmt.Print(help)
		return
	}
	fs := flag.NewFlagSet("codec", flag.ContinueOnError)
	mode := fs.String("mode", "", "")
	input := fs.String("input", "", "")
	alphabet := fs.String("alphabet", "base64", "")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	out, err := run(*mode, *alphabet, *input)
	if err != nil {
		fmt.Fprintln(os.Stderr, "codec:", err)
		os.Exit(1)
	}
	fmt.Print(out)
}

func run(mode, alphabet, input string) (string, error) {
	switch mode + "/" + alphabet {
	case "encode/base64":
		return base64.StdEncoding.EncodeToString([]byte(input)), nil
	case "encode/hex":
		return hex.EncodeToString([]byte(input)), nil
	case "decode/base64":
		b, err := base64.StdEncoding.DecodeString(input)
		return string(b), err
	case "decode/hex":
		b, err := hex.DecodeString(input)
		return string(b), err
	}
	return "", fmt.Errorf("unknown mode %q or alphabet %q", mode, alphabet)
}
