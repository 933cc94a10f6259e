package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// newSessionsCmd returns `agcore sessions` and its subcommands.
func newSessionsCmd(a *app) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, replay and export the sessions of the data directory",
		Long: `Read the sessions journaled in the data directory (--data-dir): list them,
show one's conversation, replay its journal as a timeline, or export it as a
transcript. The journal is opened for reading while no other agcore process
uses the same data directory.`,
		Example: `  agcore sessions list
  agcore sessions show 20250102-150405-1a2b3c
  agcore sessions replay 20250102-150405-1a2b3c
  agcore sessions export 20250102-150405-1a2b3c --format sharegpt > chat.json`,
		Args: unknownCommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().BoolVar(&jsonOut, "json", false, "print JSON lines instead of text")
	cmd.AddCommand(
		&cobra.Command{
			Use:   "list",
			Short: "List the sessions with their turns, tokens and last activity",
			Long: `List every session of the data directory, most recently active first: its id,
turns, messages, tokens, cost, agent, last activity and first prompt. A
session whose journal is damaged is listed as such (with --json, in its
"damaged" field), after the others; agcore doctor says what is wrong.`,
			Example: "  agcore sessions list\n  agcore sessions list --json | jq -r .session",
			Args:    noArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return a.withJournal(cmd.Context(), func(j memory.Journal) error { return listSessions(cmd, j, jsonOut) })
			},
		},
		&cobra.Command{
			Use:   "show ID",
			Short: "Show a session's state and conversation",
			Long: `Show a session's totals and its conversation as the model sees it (after
compactions): user messages, replies, tool calls and their results. A call
whose turn ended before its result (cancelled or interrupted) shows the
"interrupted" result the model was given.`,
			Example: "  agcore sessions show 20250102-150405-1a2b3c\n  agcore sessions show 20250102-150405-1a2b3c --json",
			Args:    oneID,
			RunE: func(cmd *cobra.Command, args []string) error {
				return a.withJournal(cmd.Context(), func(j memory.Journal) error { return showSession(cmd, j, args[0], jsonOut) })
			},
		},
		&cobra.Command{
			Use:   "replay ID",
			Short: "Print a session's journal as a timeline",
			Long: `Print every entry of a session's journal in order, one line each: time,
sequence number, event type and a short description. With --json each line
is the stored envelope.`,
			Example: "  agcore sessions replay 20250102-150405-1a2b3c\n  agcore sessions replay 20250102-150405-1a2b3c --json | jq -r .type",
			Args:    oneID,
			RunE: func(cmd *cobra.Command, args []string) error {
				return a.withJournal(cmd.Context(), func(j memory.Journal) error { return replaySession(cmd, j, args[0], jsonOut) })
			},
		},
		newExportCmd(a),
	)
	return cmd
}

// newExportCmd returns `agcore sessions export`.
func newExportCmd(a *app) *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Export a session as a JSON Lines or ShareGPT transcript",
		Long: `Export a session's conversation, as it happened, from its journal.

--format jsonl   one message per line: seq, turn, time, role, content,
                 tool_calls, tool_call_id, name, model, is_error
--format sharegpt  {"conversations":[{"from":"human|gpt|tool","value":...}]},
                 tool calls rendered as <tool_call>{"name":...,"arguments":...}</tool_call>
                 and results as <tool_response>{"name":...,"content":...}</tool_response>

System prompts are layered afresh for each model call and are not journaled,
so they are not part of the transcript.`,
		Example: `  agcore sessions export 20250102-150405-1a2b3c
  agcore sessions export 20250102-150405-1a2b3c --format sharegpt --output chat.json`,
		Args: oneID,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "jsonl" && format != "sharegpt" {
				return &usageError{fmt.Errorf("--format: want jsonl or sharegpt, got %q", format)}
			}
			return a.withJournal(cmd.Context(), func(j memory.Journal) error {
				entries, err := memory.Transcript(cmd.Context(), j, args[0])
				if err != nil {
					return sessionErr(args[0], err)
				}
				w := cmd.OutOrStdout()
				if output != "" {
					f, err := os.Create(output)
					if err != nil {
						return err
					}
					defer f.Close()
					w = f
				}
				if format == "sharegpt" {
					err = memory.WriteShareGPT(w, entries)
				} else {
					err = memory.WriteJSONL(w, entries)
				}
				if f, ok := w.(*os.File); ok && output != "" && err == nil {
					err = f.Close()
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "jsonl", "transcript format: jsonl or sharegpt")
	cmd.Flags().StringVarP(&output, "output", "o", "", "file to write (default: standard output)")
	return cmd
}

// oneID accepts exactly one session id.
func oneID(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return &usageError{fmt.Errorf("%s takes one session id, got %d arguments", cmd.CommandPath(), len(args))}
	}
	return nil
}

// errNoDataDir says that the data directory holds no sessions yet.
var errNoDataDir = errors.New("no data directory")

// withJournal opens the journal of the data directory for f, and closes it.
func (a *app) withJournal(ctx context.Context, f func(memory.Journal) error) error {
	cfg, err := a.loadConfig(config.Overrides{})
	if err != nil {
		return err
	}
	if _, err := os.Stat(cfg.DataDir); err != nil {
		return fmt.Errorf("%w at %s (run a session first, or set --data-dir): %w", errNoDataDir, cfg.DataDir, err)
	}
	store, err := memory.Open(memory.Options{Dir: cfg.DataDir, Logger: a.log})
	if err != nil {
		return err
	}
	j, err := memory.NewJournal(store, memory.JournalOptions{Durability: memory.DurabilityNone, Logger: a.log})
	if err != nil {
		_ = store.Close()
		return err
	}
	err = f(j)
	return errors.Join(err, j.Close(), store.Close())
}

// sessionErr names an unknown session clearly.
func sessionErr(id string, err error) error {
	if errors.Is(err, memory.ErrNotFound) {
		return fmt.Errorf("no session %q in the data directory", id)
	}
	return err
}

// sessionSummary is a line of `sessions list`.
type sessionSummary struct {
	Session string `json:"session"`
	// Damaged says what is wrong with a journal that cannot be read; its
	// other fields are then zero.
	Damaged  string    `json:"damaged,omitempty"`
	Turns    int       `json:"turns"`
	Messages int       `json:"messages"`
	Tokens   int64     `json:"tokens"`
	Cost     float64   `json:"cost"`
	Agent    string    `json:"agent,omitempty"`
	Running  bool      `json:"open_turn,omitempty"`
	Updated  time.Time `json:"updated"`
	Title    string    `json:"title,omitempty"`
}

func listSessions(cmd *cobra.Command, j memory.Journal, jsonOut bool) error {
	ctx := cmd.Context()
	var list []sessionSummary
	for id, err := range j.Sessions(ctx) {
		if err != nil {
			return err
		}
		st, err := j.Load(ctx, id)
		if errors.Is(err, memory.ErrCorrupt) {
			list = append(list, sessionSummary{Session: id, Damaged: userMessage(err)})
			continue
		}
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		s := sessionSummary{Session: id, Turns: st.Turn, Messages: len(st.History), Tokens: st.Usage.TotalTokens,
			Cost: st.Cost, Agent: st.Agent, Running: st.Open != nil, Updated: st.Updated}
		for _, m := range st.History {
			if m.Role == messages.RoleUser {
				s.Title = m.Text()
				break
			}
		}
		list = append(list, s)
	}
	// Most recently active first.
	slices.SortStableFunc(list, func(x, y sessionSummary) int { return y.Updated.Compare(x.Updated) })
	out := cmd.OutOrStdout()
	if jsonOut {
		enc := json.NewEncoder(out)
		for _, s := range list {
			if err := enc.Encode(s); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(out, "no sessions")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tTURNS\tMESSAGES\tTOKENS\tCOST\tAGENT\tUPDATED\tFIRST PROMPT")
	damaged := 0
	for _, s := range list {
		if s.Damaged != "" {
			damaged++
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\tdamaged journal: run agcore doctor\n", printable(s.Session))
			continue
		}
		agent := s.Agent
		if agent == "" {
			agent = "-"
		}
		if s.Running {
			agent += " (turn open)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t$%.4f\t%s\t%s\t%s\n", printable(s.Session), s.Turns, s.Messages, s.Tokens, s.Cost,
			printable(agent), s.Updated.Local().Format("2006-01-02 15:04:05"), oneLine(s.Title, 40))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if damaged > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "%d damaged journal%s: `agcore doctor` says what is wrong, `agcore doctor --repair` sets %s aside\n",
			damaged, plural(damaged), map[bool]string{true: "it", false: "them"}[damaged == 1])
	}
	return nil
}

func showSession(cmd *cobra.Command, j memory.Journal, id string, jsonOut bool) error {
	st, err := j.Load(cmd.Context(), id)
	if err != nil {
		return sessionErr(id, err)
	}
	out := cmd.OutOrStdout()
	if jsonOut {
		return json.NewEncoder(out).Encode(st)
	}
	agent := st.Agent
	if agent == "" {
		agent = "(default)"
	}
	fmt.Fprintf(out, "session   %s\nagent     %s\nturns     %d\nmessages  %d\ntokens    %d prompt + %d completion = %d\ncost      $%.4f\nupdated   %s\n",
		printable(id), printable(agent), st.Turn, len(st.History), st.Usage.PromptTokens, st.Usage.CompletionTokens,
		st.Usage.TotalTokens, st.Cost, st.Updated.Local().Format(time.RFC3339))
	if st.Open != nil {
		fmt.Fprintf(out, "open turn %d (it resumes when the session is next opened)\n", st.Open.Turn+1)
	}
	fmt.Fprintln(out)
	writeConversation(out, st)
	return nil
}

// pendingNote stands for the result of a call of the open turn that has
// none yet.
const pendingNote = "(no result yet: the turn resumes when the session is next opened)"

// writeConversation writes st's conversation as the model sees it: the
// results of each reply's tool calls follow it in call order, and a call
// whose turn ended without its result (cancelled, interrupted) is answered
// as interrupted, which is what the model is told. A call of the turn
// still open is shown waiting.
func writeConversation(w io.Writer, st *memory.State) {
	msgs := st.History
	for i := 0; i < len(msgs); {
		m := msgs[i]
		i++
		if m.Role == messages.RoleTool {
			continue // answers no call: the model never sees it
		}
		writeMessage(w, m)
		if m.Role != messages.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		results := map[string]messages.Message{}
		for ; i < len(msgs) && msgs[i].Role == messages.RoleTool; i++ {
			if _, dup := results[msgs[i].ToolCallID]; !dup {
				results[msgs[i].ToolCallID] = msgs[i]
			}
		}
		pending := st.Open != nil && i == len(msgs)
		for _, c := range m.ToolCalls {
			r, ok := results[c.ID]
			switch {
			case ok:
				writeMessage(w, r)
			case pending:
				fmt.Fprintf(w, "  tool %s: %s\n", printable(c.ID), pendingNote)
			default:
				writeMessage(w, messages.ToolResultMessage(c.ID, memory.InterruptedResult))
			}
		}
	}
}

// writeMessage writes one message of a conversation.
func writeMessage(w io.Writer, m messages.Message) {
	switch m.Role {
	case messages.RoleTool:
		fmt.Fprintf(w, "  tool %s: %s\n", printable(m.ToolCallID), summarize(m.Text()))
	default:
		text := strings.TrimRight(printable(m.Text()), "\n")
		if text != "" {
			fmt.Fprintf(w, "%s: %s\n", m.Role, strings.ReplaceAll(text, "\n", "\n  "))
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(w, "  → %s %s (%s)\n", printable(c.Name), compactArgs(c.Arguments), printable(c.ID))
		}
	}
}

func replaySession(cmd *cobra.Command, j memory.Journal, id string, jsonOut bool) error {
	ctx := cmd.Context()
	if tail, err := j.Tail(ctx, id); err != nil || tail == 0 {
		return sessionErr(id, errors.Join(err, memory.ErrNotFound))
	}
	out := cmd.OutOrStdout()
	enc := json.NewEncoder(out)
	for e, err := range j.Read(ctx, id, 1) {
		if err != nil {
			return err
		}
		if jsonOut {
			if err := enc.Encode(e.Envelope); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintf(out, "%s  #%-4d %-18s %s\n", e.Envelope.At.Local().Format("15:04:05.000"),
			e.Envelope.Seq, e.Envelope.Type, describe(e.Event)); err != nil {
			return err
		}
	}
	return nil
}

// describe summarises a journal event in one line. Turns are numbered from
// 1, as everywhere a person reads them; the journal's own indexes (--json)
// count from 0.
func describe(ev messages.JournalEvent) string {
	switch e := ev.(type) {
	case messages.Activated:
		return fmt.Sprintf("activation %d on %s", e.Activation, printable(e.Node))
	case messages.UserMessage:
		s := fmt.Sprintf("turn %d: %q", e.Turn+1, oneLine(e.Message.Text(), 60))
		if e.TraceID != "" {
			s += fmt.Sprintf(" · trace %s span %s", printable(e.TraceID), printable(e.SpanID))
		}
		return s
	case messages.AssistantMessage:
		s := fmt.Sprintf("turn %d", e.Turn+1)
		if t := e.Message.Text(); t != "" {
			s += fmt.Sprintf(": %q", oneLine(t, 60))
		}
		if n := len(e.Message.ToolCalls); n > 0 {
			names := make([]string, n)
			for i, c := range e.Message.ToolCalls {
				names[i] = printable(c.Name)
			}
			s += " → " + strings.Join(names, ", ")
		}
		return s + fmt.Sprintf(" · %d tokens", e.Usage.TotalTokens)
	case messages.ToolCallStarted:
		return fmt.Sprintf("%s %s (%s)", printable(e.Name), compactArgs(e.Arguments), printable(e.CallID))
	case messages.ToolResult:
		mark := markOK
		if e.IsError {
			mark = markFail
		}
		return fmt.Sprintf("%s %s %s · %s (%s)", mark, printable(e.Name), formatDuration(e.Duration), summarize(e.Content), printable(e.CallID))
	case messages.TurnCompleted:
		s := fmt.Sprintf("turn %d %s · %d round trips · %d tokens", e.Turn+1, e.Outcome, e.RoundTrips, e.Usage.TotalTokens)
		if e.Reason != "" {
			s += " · " + oneLine(e.Reason, 60)
		}
		return s
	case messages.TurnCancelled:
		return fmt.Sprintf("turn %d: %s", e.Turn+1, oneLine(e.Reason, 60))
	case messages.Compacted:
		return fmt.Sprintf("%s through #%d: %d → %d tokens", e.Kind, e.Through, e.TokensBefore, e.TokensAfter)
	case messages.AgentSwitched:
		return fmt.Sprintf("%s → %s", printable(e.From), printable(e.To))
	case messages.ApprovalRequested:
		return fmt.Sprintf("%s (%s): %s", printable(e.Tool), printable(e.CallID), oneLine(e.Reason, 60))
	case messages.ApprovalGranted:
		return fmt.Sprintf("%s by %s", printable(e.CallID), printable(e.By))
	case messages.ApprovalDenied:
		return fmt.Sprintf("%s by %s: %s", printable(e.CallID), printable(e.By), oneLine(e.Reason, 60))
	case messages.SubAgentSpawned:
		return fmt.Sprintf("%s (%s): %q", printable(e.Child), printable(e.Agent), oneLine(e.Task, 60))
	case messages.SubAgentFinished:
		return fmt.Sprintf("%s %s: %q", printable(e.Child), e.Outcome, oneLine(e.Result, 60))
	case messages.ElicitationRequested:
		return fmt.Sprintf("%s asks (%s): %q · fields %s", printable(e.Server), printable(e.CallID), oneLine(e.Message, 60),
			printable(strings.Join(e.Fields, ", ")))
	case messages.ElicitationResolved:
		return fmt.Sprintf("%s: %s by %s · fields %s", printable(e.ID), printable(e.Action), printable(e.By),
			printable(strings.Join(e.Fields, ", ")))
	case messages.SamplingAnswered:
		return fmt.Sprintf("%s (%s) · %s: %q · %d tokens", printable(e.Server), printable(e.CallID), printable(e.Model),
			oneLine(e.Text, 60), e.Usage.TotalTokens)
	}
	return ""
}
