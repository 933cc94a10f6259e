package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

const metaHelp = `agcore-tool: 1
name: meta
description: Echoes its arguments as a JSON result with metadata.
permission: read-only
idempotent: true
env: GREETING=hello world
param: --text string required | the text to echo
param: --token string secret | a credential the tool may receive
param: --tag array | labels, repeated
param: --count integer default=1 | how many times to echo the text
param: --ratio number | a ratio reported back
param: --loud boolean | upper-case the text
param: --fail boolean | report the result as an error
param: --plain boolean | answer in plain text instead of JSON
`

// list is a repeated flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// meta answers with the JSON result object: its content echoes the text,
// and its metadata reports the command-line arguments and the environment
// the tool was given.
func meta(helpAsked bool) {
	if helpAsked {
		fmt.Print(metaHelp)
		return
	}
	fs := flag.NewFlagSet("meta", flag.ContinueOnError)
	text := fs.String("text", "", "")
	token := fs.String("token", "", "")
	var tg list
	fs.Var(&tg, "tag", "")
	count := fs.Int("count", 1, "")
	ratio := fs.Float64("ratio", 0, "")
	loud := fs.Bool("loud", false, "")
	fail := fs.Bool("fail", false, "")
	plain := fs.Bool("plain", false, "")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	out := strings.Repeat(*text, *count)
	if *loud {
		out = strings.ToUpper(out)
	}
	if *plain {
		fmt.Println(out)
		return
	}
	res := map[string]any{
		"content": out,
		"error":   *fail,
		"metadata": map[string]any{
			"argv":      os.Args[1:],
			"env":       os.Environ(),
			"tags":      []string(tg),
			"ratio":     *ratio,
			"token":     *token,
			"token_len": len(*token),
		},
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		os.Exit(1)
	}
}
