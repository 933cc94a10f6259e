package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/messages"
)

// chatHelp lists the commands of the chat prompt.
const chatHelp = `/agent [NAME]  show the agent, or switch to agent NAME
/cancel        cancel the reply being streamed
/usage         tokens and cost of the session so far
/help          this help
/exit          leave (Ctrl-D does too)`

// chatOptions are the flags of `agcore chat`.
type chatOptions struct {
	modelFlags
	session string
}

// newChatCmd returns `agcore chat`.
func newChatCmd(a *app) *cobra.Command {
	var o chatOptions
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk with an agent, line by line, with streamed replies",
		Long: `Start an interactive chat: each line you enter is a turn, and the reply
streams back with a line per tool call. The session is journaled in the data
directory; continue it later with --session.

Commands:
` + chatHelp + `

Input is read while a reply streams, so /cancel stops it at once; other
lines typed meanwhile run after it, in order. Ctrl-C cancels the running
turn and leaves (exit code 130). Standard input may be a pipe: the lines are
then played in order, which makes chat scriptable.`,
		Example: `  agcore chat
  agcore chat --model mock/scripted
  agcore chat --session 20250102-150405-1a2b3c
  printf 'Summarise this project\n/usage\n/exit\n' | agcore chat --model mock/scripted`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChat(cmd, a, o) },
	}
	addModelFlags(cmd, &o.modelFlags)
	cmd.Flags().StringVar(&o.session, "session", "", "session to continue (default: a new session)")
	return cmd
}

// chat is a running chat.
type chat struct {
	ctx  context.Context
	sess *actors.Session
	out  io.Writer
	term term
	r    *renderer
	// agents are the names of the configured agents.
	agents []string
	// queued holds lines typed while a turn ran.
	queued []string
	exit   bool
}

func runChat(cmd *cobra.Command, a *app, o chatOptions) error {
	ctx := cmd.Context()
	cfg, err := a.loadConfig(o.overrides())
	if err != nil {
		return err
	}
	sess, id, stop, err := a.openSession(ctx, cfg, o.session)
	if err != nil {
		return err
	}
	st, err := sess.Status(ctx)
	if err != nil {
		return withStop(err, stop)
	}
	out := cmd.OutOrStdout()
	c := &chat{ctx: ctx, sess: sess, out: out, term: termFor(out, a.getenv)}
	c.r = newRenderer(out, c.term, false)
	for _, ag := range cfg.Agents {
		c.agents = append(c.agents, ag.Name)
	}
	fmt.Fprintf(out, "%s\n", c.term.dim(fmt.Sprintf("agcore chat · session %s · agent %s · model %s · /help for commands",
		id, st.Agent, cfg.DefaultModel)))
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return withStop(c.loop(readLines(lctx, cmd.InOrStdin())), stop)
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

// loop reads and runs lines until /exit, the end of input or an interrupt.
func (c *chat) loop(input <-chan string) error {
	for !c.exit {
		var line string
		if len(c.queued) > 0 {
			line, c.queued = c.queued[0], c.queued[1:]
		} else {
			if c.term.tty {
				fmt.Fprint(c.out, c.term.bold("> "))
			}
			var ok bool
			select {
			case line, ok = <-input:
				if !ok {
					return nil
				}
			case <-c.ctx.Done():
				return context.Cause(c.ctx)
			}
		}
		if err := c.handle(line, input); err != nil {
			return err
		}
	}
	return nil
}

// handle runs one line: a command, or a turn.
func (c *chat) handle(line string, input <-chan string) error {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	if !strings.HasPrefix(line, "/") {
		_, err := playTurn(c.ctx, c.sess, messages.UserText(line), c.r, input, c.duringTurn)
		if err != nil && c.ctx.Err() == nil {
			// A failed turn is shown and the chat goes on.
			fmt.Fprintln(c.out, c.term.red("error: "+err.Error()))
			return nil
		}
		return err
	}
	name, arg, _ := strings.Cut(line[1:], " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "exit", "quit":
		c.exit = true
	case "help":
		fmt.Fprintln(c.out, chatHelp)
	case "usage":
		return c.usage()
	case "cancel":
		fmt.Fprintln(c.out, c.term.dim("no reply is streaming"))
	case "agent":
		return c.agent(arg)
	default:
		fmt.Fprintln(c.out, c.term.red(fmt.Sprintf("unknown command /%s", printable(name)))+c.term.dim(" (/help lists them)"))
	}
	return nil
}

// duringTurn handles a line typed while a turn runs: /cancel cancels it,
// anything else waits for it to end.
func (c *chat) duringTurn(line string) {
	if strings.TrimSpace(line) != "/cancel" {
		c.queued = append(c.queued, line)
		return
	}
	if _, err := c.sess.Cancel(c.ctx); err != nil {
		fmt.Fprintln(c.out, c.term.red("cancel: "+err.Error()))
	}
}

// usage prints the session's usage.
func (c *chat) usage() error {
	st, err := c.sess.Status(c.ctx)
	if err != nil {
		return err
	}
	u := st.Usage
	fmt.Fprintf(c.out, "usage: %d turns · %d prompt + %d completion = %d tokens · cost $%.4f\n",
		st.NextTurn, u.PromptTokens, u.CompletionTokens, u.TotalTokens, st.Cost)
	return nil
}

// agent shows the agent, or switches to name.
func (c *chat) agent(name string) error {
	if name == "" {
		st, err := c.sess.Status(c.ctx)
		if err != nil {
			return err
		}
		msg := "agent: " + st.Agent
		if len(c.agents) > 0 {
			msg += " (available: " + strings.Join(c.agents, ", ") + ")"
		}
		fmt.Fprintln(c.out, msg)
		return nil
	}
	err := c.sess.SwitchAgent(c.ctx, name)
	switch {
	case errors.Is(err, actors.ErrUnknownAgent):
		fmt.Fprintln(c.out, c.term.red(fmt.Sprintf("no agent named %q", printable(name))))
		return nil
	case err != nil:
		return err
	}
	fmt.Fprintln(c.out, c.term.dim("agent: "+name))
	return nil
}
