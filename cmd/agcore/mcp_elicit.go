package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agcore/agcore/toolsys/mcp"
)

// elicitPrompt asks an MCP server's questions on a terminal, one at a
// time: each field of the requested schema in turn (Enter keeps the
// default), then accept, decline or cancel. An answer that does not fit
// the schema is asked again.
type elicitPrompt struct {
	out io.Writer

	mu    sync.Mutex // one question at a time
	lines chan string
}

// newElicitPrompt reads answers from in, lines at a time, and writes the
// questions to out.
func newElicitPrompt(in io.Reader, out io.Writer) *elicitPrompt {
	p := &elicitPrompt{out: out, lines: make(chan string)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p
}

// readLine returns the next line, or an error when ctx ends or the input
// is over.
func (p *elicitPrompt) readLine(ctx context.Context) (string, error) {
	select {
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for an answer: %w", ctx.Err())
	case line, ok := <-p.lines:
		if !ok {
			return "", io.ErrUnexpectedEOF
		}
		return strings.TrimSpace(line), nil
	}
}

// ask implements mcp.ElicitFunc.
func (p *elicitPrompt) ask(ctx context.Context, q mcp.Elicitation) (mcp.ElicitAnswer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "\nMCP server %s asks: %s\n", q.Server, q.Message)
	if q.Mode == "url" {
		fmt.Fprintf(p.out, "It asks you to open: %s\n", q.URL)
		return p.choose(ctx, nil)
	}
	for {
		content := map[string]any{}
		for _, name := range q.Fields() {
			v, set, err := p.field(ctx, name, q.Schema.Properties[name])
			if err != nil {
				return mcp.ElicitAnswer{}, err
			}
			if set {
				content[name] = v
			}
		}
		if _, err := mcp.ApplyElicitationSchema(q.Schema, content); err != nil {
			fmt.Fprintf(p.out, "%v; please answer again.\n", err)
			continue
		}
		return p.choose(ctx, content)
	}
}

// choose asks whether to send the answer.
func (p *elicitPrompt) choose(ctx context.Context, content map[string]any) (mcp.ElicitAnswer, error) {
	for {
		fmt.Fprint(p.out, "Send the answer? [a]ccept, [d]ecline, [c]ancel: ")
		line, err := p.readLine(ctx)
		if err != nil {
			return mcp.ElicitAnswer{}, err
		}
		switch strings.ToLower(line) {
		case "a", "accept", "y", "yes":
			return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: content}, nil
		case "d", "decline", "n", "no":
			return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
		case "c", "cancel":
			return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
		}
	}
}

// field asks one field; set is false when the user kept the default (or
// left an optional field empty).
func (p *elicitPrompt) field(ctx context.Context, name string, s *jsonschema.Schema) (any, bool, error) {
	for {
		label := name
		if s != nil && s.Description != "" {
			label += " (" + s.Description + ")"
		}
		if s != nil && len(s.Enum) > 0 {
			label += fmt.Sprintf(" %v", s.Enum)
		}
		if s != nil && len(s.Default) > 0 {
			label += " [" + string(s.Default) + "]"
		}
		fmt.Fprintf(p.out, "  %s: ", label)
		line, err := p.readLine(ctx)
		if err != nil {
			return nil, false, err
		}
		if line == "" {
			return nil, false, nil
		}
		v, err := parseElicitValue(s, line)
		if err != nil {
			fmt.Fprintf(p.out, "  %v\n", err)
			continue
		}
		return v, true, nil
	}
}

// parseElicitValue reads line as the type s asks for.
func parseElicitValue(s *jsonschema.Schema, line string) (any, error) {
	typ := ""
	if s != nil {
		typ = s.Type
	}
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want a whole number, got %q", line)
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(line, 64)
		if err != nil {
			return nil, fmt.Errorf("want a number, got %q", line)
		}
		return n, nil
	case "boolean":
		switch strings.ToLower(line) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("want yes or no, got %q", line)
	case "string", "":
		return line, nil
	}
	var v any
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		return nil, fmt.Errorf("want JSON for a %s, got %q", typ, line)
	}
	return v, nil
}
