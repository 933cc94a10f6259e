package main

import (
	"bufio"
	"context"
	"io"
)

// lineReader reads standard input line by line for whoever needs a line:
// the chat's own prompt and the approval prompts share one, so that every
// line goes to exactly one of them. It starts reading on first use, so a
// command that never asks reads nothing of its standard input. It is used
// from one goroutine.
type lineReader struct {
	ctx context.Context
	r   io.Reader
	ch  <-chan string
}

// newLineReader returns a reader of r that stops sending lines when ctx
// is done.
func newLineReader(ctx context.Context, r io.Reader) *lineReader {
	return &lineReader{ctx: ctx, r: r}
}

// lines returns the lines, starting to read them if need be. The channel
// is closed at the end of the input.
func (l *lineReader) lines() <-chan string {
	if l.ch == nil {
		l.ch = readLines(l.ctx, l.r)
	}
	return l.ch
}

// started returns the lines if reading has started, else nil.
func (l *lineReader) started() <-chan string {
	if l == nil {
		return nil
	}
	return l.ch
}

// readLines sends the lines of r on the returned channel, closing it at
// the end of r. A read error ends the lines like an end of input. It stops
// sending when ctx is done (a read in progress still completes).
func readLines(ctx context.Context, r io.Reader) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return lines
}
