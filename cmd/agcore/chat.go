package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// chatHelp lists the commands of the chat prompt.
const chatHelp = `/agent [NAME]  show the agent, or switch to agent NAME
/cancel        cancel the reply being streamed
/history       the conversation so far, as the model sees it
/usage         tokens and cost of the session so far
/help          this help
/exit          leave (Ctrl-D does too)`

// chatOptions are the flags of `agcore chat`.
type chatOptions struct {
	modelFlags
	perms   permissionFlags
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
then played in order, which makes chat scriptable.

Approvals. On a terminal, a tool call that the permission mode does not run
by itself (bash, in the default mode accept-edits) is asked about as in
agcore run: y (allow once), a (allow this tool on this same subject until
the chat ends) or n (deny; "n REASON" tells the model why), then Enter. The
line you type next answers the question on screen; /cancel still cancels
the turn. Without a terminal such calls are refused, and standard error
says once per tool which --allow rule, --permission-mode or
permissions.allow rule would let them run. --allow RULE and --deny RULE
(repeatable) add rules to permissions.allow and permissions.deny.

A turn that fails or stops at a limit is reported once, on standard error,
and the chat goes on; chat then exits 1 when its input ends (or at /exit).
The session is created with the first prompt: input without one leaves
nothing behind.`,
		Example: `  agcore chat
  agcore chat --model mock/scripted
  agcore chat --session 20250102-150405-1a2b3c
  agcore chat --allow 'bash(go test **)' --deny 'bash(git push *)'
  printf 'Summarise this project\n/history\n/usage\n/exit\n' | agcore chat --model mock/scripted`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChat(cmd, a, o) },
	}
	addModelFlags(cmd, &o.modelFlags)
	addPermissionFlags(cmd, &o.perms, true)
	cmd.Flags().StringVar(&o.session, "session", "", "session to continue (default: a new session)")
	return cmd
}

// chat is a running chat.
type chat struct {
	ctx context.Context
	rt  *actors.Runtime
	// id is the session's id; sess is nil until the session is opened,
	// when the first line that needs it arrives, so that a chat with
	// nothing to say leaves no session behind.
	id   string
	sess *actors.Session
	out  io.Writer
	// errw receives the failures of turns, once each.
	errw io.Writer
	term term
	r    *renderer
	// in is standard input, read all along: the chat's lines and the
	// answers to approvals alike; prompt asks about the calls that need
	// approval.
	in     *lineReader
	prompt *approvalPrompt
	// questions asks the MCP servers' questions of the session.
	questions *questionPrompt
	// defaultAgent is the agent of a new session; agents are the names of
	// the configured agents.
	defaultAgent string
	agents       []string
	// queued holds lines typed while a turn ran.
	queued []string
	exit   bool
	// turns counts the turns played, failed those that failed or stopped
	// at a limit.
	turns, failed int
}

func runChat(cmd *cobra.Command, a *app, o chatOptions) error {
	ctx := cmd.Context()
	cfg, err := a.loadConfig(o.perms.add(o.overrides()))
	if err != nil {
		return err
	}
	ap := a.newApprover(cmd)
	rt, stop, err := a.startRuntime(ctx, cfg, ap, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	c := &chat{ctx: ctx, rt: rt, id: o.session, out: out, errw: cmd.ErrOrStderr(), term: termFor(out, a.getenv)}
	c.r = newRenderer(out, c.errw, c.term, false)
	c.prompt = newApprovalPrompt(ap, out, c.term, c.r)
	c.questions = newQuestionPrompt(out, cmd.ErrOrStderr(), c.term, c.r, a.redactor, ap.unaskable)
	for _, ag := range cfg.Agents {
		c.agents = append(c.agents, ag.Name)
	}
	c.defaultAgent = cmp.Or(cfg.DefaultAgent, "default")
	if cfg.DefaultAgent == "" && len(c.agents) > 0 {
		c.defaultAgent = c.agents[0]
	}
	agent := c.defaultAgent
	if c.id == "" {
		c.id = newSessionID(time.Now())
	} else if tail, err := rt.Journal().Tail(ctx, c.id); err != nil && !errors.Is(err, memory.ErrNotFound) {
		return withStop(err, stop)
	} else if tail > 0 {
		// An existing session: show where it stands.
		if agent, err = c.agentName(); err != nil {
			return withStop(err, stop)
		}
	}
	fmt.Fprintf(out, "%s\n", c.term.dim(fmt.Sprintf("agcore chat · session %s · agent %s · model %s · /help for commands",
		c.id, agent, cfg.DefaultModel)))
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.in = newLineReader(lctx, cmd.InOrStdin())
	err = c.loop(c.in.lines())
	if err == nil && c.failed > 0 {
		err = fmt.Errorf("%d of %d turns failed", c.failed, c.turns)
	}
	return withStop(err, stop)
}

// session returns the chat's session, opening it the first time.
func (c *chat) session() (*actors.Session, error) {
	if c.sess == nil {
		sess, err := c.rt.Open(c.ctx, c.id)
		if err != nil {
			return nil, err
		}
		c.sess = sess
	}
	return c.sess, nil
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
		if err := c.handle(line); err != nil {
			return err
		}
	}
	return nil
}

// handle runs one line: a command, or a turn.
func (c *chat) handle(line string) error {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	if !strings.HasPrefix(line, "/") {
		return c.turn(line)
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
	case "history":
		return c.history()
	case "cancel":
		fmt.Fprintln(c.out, c.term.dim("no reply is streaming"))
	case "agent":
		return c.agent(arg)
	default:
		fmt.Fprintln(c.out, c.term.red(fmt.Sprintf("unknown command /%s", printable(name)))+c.term.dim(" (/help lists them)"))
	}
	return nil
}

// turn plays line as a turn. A failed turn is reported once, on the
// error stream, and the chat goes on.
func (c *chat) turn(line string) error {
	sess, err := c.session()
	if err != nil {
		return err
	}
	c.turns++
	end, err := playTurn(c.ctx, sess, messages.UserText(line), c.r, turnInput{lines: c.in, onLine: c.duringTurn, prompt: c.prompt,
		questions: c.questions})
	switch {
	case err != nil && c.ctx.Err() != nil:
		return err
	case err != nil:
		c.failed++
		fmt.Fprintln(c.errw, c.term.red(userMessage(err)))
	case end.Outcome != messages.OutcomeCompleted && end.Outcome != messages.OutcomeCancelled:
		c.failed++
		fmt.Fprintln(c.errw, c.term.red(userMessage(turnErr(end))))
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
		fmt.Fprintln(c.errw, c.term.red("cancel: "+userMessage(err)))
	}
}

// usage prints the session's usage.
func (c *chat) usage() error {
	var st actors.Status
	if c.sess != nil {
		var err error
		if st, err = c.sess.Status(c.ctx); err != nil {
			return err
		}
	}
	u := st.Usage
	fmt.Fprintf(c.out, "usage: %d turns · %d prompt + %d completion = %d tokens · cost $%.4f\n",
		st.NextTurn, u.PromptTokens, u.CompletionTokens, u.TotalTokens, st.Cost)
	return nil
}

// history prints the conversation so far as the model sees it.
func (c *chat) history() error {
	st, err := c.rt.Journal().Load(c.ctx, c.id)
	if errors.Is(err, memory.ErrNotFound) || err == nil && len(st.History) == 0 {
		fmt.Fprintln(c.out, c.term.dim("no messages yet"))
		return nil
	}
	if err != nil {
		return err
	}
	writeConversation(c.out, st)
	return nil
}

// agentName is the session's agent.
func (c *chat) agentName() (string, error) {
	sess, err := c.session()
	if err != nil {
		return "", err
	}
	st, err := sess.Status(c.ctx)
	if err != nil {
		return "", err
	}
	return st.Agent, nil
}

// agent shows the agent, or switches to name.
func (c *chat) agent(name string) error {
	if name == "" {
		agent := c.defaultAgent
		if c.sess != nil {
			var err error
			if agent, err = c.agentName(); err != nil {
				return err
			}
		}
		msg := "agent: " + agent
		if len(c.agents) > 0 {
			msg += " (available: " + strings.Join(c.agents, ", ") + ")"
		}
		fmt.Fprintln(c.out, msg)
		return nil
	}
	if !slices.Contains(c.rt.Agents(), name) {
		fmt.Fprintln(c.out, c.term.red(fmt.Sprintf("no agent named %q", printable(name))))
		return nil
	}
	sess, err := c.session()
	if err != nil {
		return err
	}
	err = sess.SwitchAgent(c.ctx, name)
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
