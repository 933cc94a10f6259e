package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/knowledge"
)

// newKnowledgeCmd returns `agcore knowledge` and its subcommands.
func newKnowledgeCmd(a *app) *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "knowledge",
		Short: "Add, list, search and remove the knowledge pages of the data directory",
		Long: `Manage the knowledge base kept in the data directory (--data-dir): pages with a
title, a summary, a body and tags, indexed by keyword. Agents whose profile
sets retrieve: true, in a configuration with knowledge.enabled: true, get the
pages that best match each user message in their prompt, and a retrieve tool.

The store is opened while no other agcore process uses the same data
directory: stop agcore serve to change its pages.`,
		Example: `  agcore knowledge add docs/*.md --tag docs
  echo "Refunds take 5 days." | agcore knowledge add - --title "Refund policy"
  agcore knowledge list
  agcore knowledge search "how long does a refund take"
  agcore knowledge rm refund-policy`,
		Args: unknownCommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().BoolVar(&jsonOut, "json", false, "print JSON lines instead of text")
	cmd.AddCommand(newKnowledgeAddCmd(a), &cobra.Command{
		Use:     "list",
		Short:   "List the pages: id, title, tags and how often they were retrieved",
		Example: "  agcore knowledge list\n  agcore knowledge list --json | jq -r .id",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withKnowledge(cmd.Context(), false, func(kb *knowledge.Base) error { return listPages(cmd, kb, jsonOut) })
		},
	}, &cobra.Command{
		Use:     "search QUERY",
		Short:   "Show the pages a retrieval for QUERY returns, best first",
		Example: `  agcore knowledge search "refund policy"`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withKnowledge(cmd.Context(), false, func(kb *knowledge.Base) error {
				return searchPages(cmd, kb, strings.Join(args, " "), jsonOut)
			})
		},
	}, &cobra.Command{
		Use:     "rm ID...",
		Short:   "Remove pages",
		Example: "  agcore knowledge rm refund-policy",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withKnowledge(cmd.Context(), false, func(kb *knowledge.Base) error {
				for _, id := range args {
					if err := kb.Delete(cmd.Context(), id); err != nil {
						if errors.Is(err, memory.ErrNotFound) {
							return fmt.Errorf("no page %q in the knowledge base", id)
						}
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", id)
				}
				return nil
			})
		},
	})
	return cmd
}

// newKnowledgeAddCmd returns `agcore knowledge add`.
func newKnowledgeAddCmd(a *app) *cobra.Command {
	var (
		title, id, summary string
		tags               []string
	)
	cmd := &cobra.Command{
		Use:   "add FILE... | -",
		Short: "Add or replace pages, one per file (or standard input)",
		Long: `Add a page per file: its id is the file's base name without extension
("docs/refund-policy.md" is refund-policy), its title the first Markdown
heading, else the id, and its body the whole file. A page with that id is
replaced. "-" reads one page from standard input, which needs --title or
--id. --title, --id and --summary apply to a single page.`,
		Example: `  agcore knowledge add docs/*.md --tag docs
  echo "Refunds take 5 days." | agcore knowledge add - --title "Refund policy" --tag billing`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 && (title != "" || id != "" || summary != "") {
				return &usageError{errors.New("--title, --id and --summary apply to a single page: give one FILE")}
			}
			pages := make([]knowledge.Page, 0, len(args))
			for _, arg := range args {
				p, err := readPage(cmd.InOrStdin(), arg)
				if err != nil {
					return err
				}
				p.Tags = tags
				if title != "" {
					p.Title = title
				}
				if summary != "" {
					p.Summary = summary
				}
				switch {
				case id != "":
					p.ID = id
				case p.ID == "" && p.Title != "":
					p.ID = slug(p.Title)
				}
				if p.ID == "" {
					return &usageError{errors.New("a page read from standard input needs --title or --id")}
				}
				if p.Title == "" {
					p.Title = p.ID
				}
				pages = append(pages, p)
			}
			return a.withKnowledge(cmd.Context(), true, func(kb *knowledge.Base) error {
				for _, p := range pages {
					if _, err := kb.Upsert(cmd.Context(), p); err != nil {
						return fmt.Errorf("page %s: %w", p.ID, err)
					}
					fmt.Fprintf(cmd.OutOrStdout(), "added %s: %s\n", p.ID, p.Title)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&title, "title", "", "the page's title (default: the first Markdown heading, else the id)")
	f.StringVar(&id, "id", "", "the page's id (default: the file's base name, or the title made into a slug)")
	f.StringVar(&summary, "summary", "", "a short abstract, weighed second in retrieval")
	f.StringSliceVar(&tags, "tag", nil, "a tag for every page added (repeatable)")
	return cmd
}

// readPage reads the page of a file, or of stdin for "-".
func readPage(stdin io.Reader, name string) (knowledge.Page, error) {
	var (
		b   []byte
		err error
		p   knowledge.Page
	)
	if name == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(name)
		base := filepath.Base(name)
		p.ID = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if err != nil {
		return p, err
	}
	p.Content = string(b)
	for _, line := range strings.Split(p.Content, "\n") {
		if h, ok := strings.CutPrefix(line, "# "); ok {
			p.Title = strings.TrimSpace(h)
			break
		}
	}
	return p, nil
}

// slug makes a page id of a title: lower case, runs of other characters
// than letters and digits as one "-".
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// withKnowledge opens the knowledge base of the data directory for f, and
// closes it; create makes the data directory when it is missing.
func (a *app) withKnowledge(ctx context.Context, create bool, f func(*knowledge.Base) error) error {
	cfg, err := a.loadConfig(config.Overrides{})
	if err != nil {
		return err
	}
	if create {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
	} else if _, err := os.Stat(cfg.DataDir); err != nil {
		return fmt.Errorf("%w at %s (add pages first, or set --data-dir): %w", errNoDataDir, cfg.DataDir, err)
	}
	store, err := memory.Open(memory.Options{Dir: cfg.DataDir, Logger: a.log})
	if err != nil {
		return err
	}
	// The configured eviction bounds the pages whoever writes them.
	kb, err := knowledge.New(store, knowledge.Options{Logger: a.log, Eviction: cfg.Knowledge.Eviction.KnowledgePolicy()})
	if err != nil {
		return errors.Join(err, store.Close())
	}
	return errors.Join(f(kb), store.Close())
}

// listPages prints every page.
func listPages(cmd *cobra.Command, kb *knowledge.Base, jsonOut bool) error {
	out := cmd.OutOrStdout()
	enc := json.NewEncoder(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if !jsonOut {
		fmt.Fprintln(tw, "ID\tTITLE\tTAGS\tRETRIEVED")
	}
	n := 0
	for p, err := range kb.List(cmd.Context(), "") {
		if err != nil {
			return err
		}
		n++
		if jsonOut {
			if err := enc.Encode(p); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", printable(p.ID), printable(p.Title), printable(strings.Join(p.Tags, ",")), p.AccessCount)
	}
	if jsonOut {
		return nil
	}
	if n == 0 {
		fmt.Fprintln(out, "no knowledge pages: add some with agcore knowledge add")
		return nil
	}
	return tw.Flush()
}

// searchPages prints what a retrieval of query returns, without counting
// it as a recall.
func searchPages(cmd *cobra.Command, kb *knowledge.Base, query string, jsonOut bool) error {
	r, err := knowledge.NewRetriever(kb, knowledge.RetrieverOptions{SkipRecall: true})
	if err != nil {
		return err
	}
	res, err := r.Retrieve(cmd.Context(), query)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if jsonOut {
		enc := json.NewEncoder(out)
		for _, p := range res.Items {
			if err := enc.Encode(p); err != nil {
				return err
			}
		}
		return nil
	}
	if len(res.Items) == 0 {
		fmt.Fprintln(out, "no page matches")
		return nil
	}
	for _, it := range res.Items {
		fmt.Fprintf(out, "%.2f  %s: %s\n", it.Score, printable(it.Page.ID), printable(it.Page.Title))
	}
	return nil
}
