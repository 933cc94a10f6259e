package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/knowledge"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/builtin"
)

// MemoryTools gives agents the memory tools: memory_write, memory_read,
// memory_search and memory_delete, over the session's key-value notes and,
// with knowledge.enabled, the knowledge base of the data directory.
type MemoryTools struct {
	// Enabled registers the four tools. False (the default) leaves them
	// out.
	Enabled bool `yaml:"enabled"`
	// Scope says whose knowledge pages an agent's memory tools reach:
	// "agent" (the default) keeps each agent's pages apart, "shared" gives
	// every agent the same pages. Session notes belong to their session
	// either way.
	Scope string `yaml:"scope"`
	// MaxValueBytes caps one note or page that memory_write stores. Zero
	// means 64 KiB.
	MaxValueBytes int `yaml:"max_value_bytes"`
	// MaxResults is the number of results of a memory_search that names
	// none. Zero means 10; at most 50.
	MaxResults int `yaml:"max_results"`
}

// validateMemoryTools checks the memory_tools section.
func validateMemoryTools(ps *problems, m MemoryTools) {
	if _, err := builtin.ParseMemoryScope(m.Scope); err != nil {
		ps.add("memory_tools.scope", "%v", err)
	}
	if m.MaxValueBytes < 0 {
		ps.add("memory_tools.max_value_bytes", "must not be negative, got %d", m.MaxValueBytes)
	}
	if m.MaxResults < 0 || m.MaxResults > builtin.MaxMemoryResults {
		ps.add("memory_tools.max_results", "must be between 0 and %d, got %d", builtin.MaxMemoryResults, m.MaxResults)
	}
}

// memoryTools registers the memory tools in b.Tools when memory_tools is
// enabled. For a runtime it opens the store of the data directory (unless
// the knowledge base opened it already) and gives the same session memory
// to the runtime's prompt and to the tools; with ToolsOnly it registers the
// tools without their stores, for listing.
func (b *Built) memoryTools(c *Config, opts BuildOptions) error {
	if !c.MemoryTools.Enabled {
		return nil
	}
	scope, _ := builtin.ParseMemoryScope(c.MemoryTools.Scope) // validated
	mo := builtin.MemoryOptions{Scope: scope, MaxValueBytes: c.MemoryTools.MaxValueBytes, MaxResults: c.MemoryTools.MaxResults}
	if !opts.ToolsOnly {
		store, err := b.openStore(c, opts)
		if err != nil {
			return err
		}
		sm := memory.NewSessionMemory(store, memory.SessionMemoryOptions{MaxValueBytes: c.MemoryTools.MaxValueBytes})
		b.Runtime.SessionMemory = sm
		mo.Notes = NotesFrom(sm)
		if b.knowledge != nil {
			mo.Pages = PagesFrom(b.knowledge)
		}
	}
	for _, t := range builtin.MemoryTools(mo) {
		if err := b.Tools.Register(t, toolsys.WithSource(toolsys.SourceBuiltin), toolsys.WithCategory("memory"),
			toolsys.WithTags("builtin", "memory")); err != nil {
			return fmt.Errorf("config: tool %s: %w", t.Name(), err)
		}
	}
	return nil
}

// openStore returns the store of the data directory, opening it (and
// handing it to the runtime in place of the DataDir) if the knowledge base
// has not.
func (b *Built) openStore(c *Config, opts BuildOptions) (*memory.Store, error) {
	if b.Runtime.Store != nil {
		return b.Runtime.Store, nil
	}
	if c.DataDir == "" {
		return nil, errors.New("config: memory_tools.enabled needs a data directory (data_dir or --data-dir)")
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("config: data directory: %w", err)
	}
	log := opts.Logger.With().Str("component", "memory").Logger()
	store, err := memory.Open(memory.Options{Dir: c.DataDir, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("config: data directory %s: %w", c.DataDir, err)
	}
	b.closers = append(b.closers, store.Close)
	b.Runtime.DataDir, b.Runtime.Store = "", store
	return store, nil
}

// NotesFrom adapts a session memory to the memory tools' MemoryNotes.
func NotesFrom(sm *memory.SessionMemory) builtin.MemoryNotes { return notes{sm} }

type notes struct{ sm *memory.SessionMemory }

func (n notes) Get(ctx context.Context, session, key string) (string, error) {
	v, err := n.sm.Get(ctx, session, key)
	return v, notFound(err)
}

func (n notes) Set(ctx context.Context, session, key, value string) error {
	return n.sm.Set(ctx, session, key, value)
}

func (n notes) Delete(ctx context.Context, session, key string) error {
	return n.sm.Delete(ctx, session, key)
}

func (n notes) List(ctx context.Context, session string) ([]builtin.MemoryNote, error) {
	kvs, err := n.sm.List(ctx, session)
	out := make([]builtin.MemoryNote, len(kvs))
	for i, kv := range kvs {
		out[i] = builtin.MemoryNote{Key: kv.Key, Value: kv.Value}
	}
	return out, err
}

// PagesFrom adapts a knowledge base to the memory tools' MemoryPages.
// Writes go through the base, so its validation and its eviction policy
// apply to them as to any page; a search counts as a recall of the pages
// it returns, as the prompt's retrieval does.
func PagesFrom(kb *knowledge.Base) builtin.MemoryPages {
	// The base's own options are valid, so NewRetriever cannot fail.
	r, _ := knowledge.NewRetriever(kb, knowledge.RetrieverOptions{MaxResults: pageSearchWindow, SkipRecall: true})
	return pages{kb: kb, r: r}
}

// pageSearchWindow is how many ranked pages a search reads before keeping
// those of the caller's scope.
const pageSearchWindow = 200

type pages struct {
	kb *knowledge.Base
	r  *knowledge.Retriever
}

func (p pages) Get(ctx context.Context, id string) (builtin.MemoryPage, error) {
	pg, err := p.kb.Get(ctx, id)
	if err != nil {
		return builtin.MemoryPage{}, notFound(err)
	}
	return memoryPage(pg), nil
}

func (p pages) Put(ctx context.Context, mp builtin.MemoryPage) (builtin.MemoryPage, error) {
	pg, err := p.kb.Upsert(ctx, knowledge.Page{ID: mp.ID, Title: mp.Title, Content: mp.Content, Tags: mp.Tags})
	if err != nil && !errors.Is(err, knowledge.ErrEviction) {
		return builtin.MemoryPage{}, err
	}
	// A failed eviction pass after a successful write is the base's
	// concern (it retries on the next write), not the caller's.
	return memoryPage(pg), nil
}

func (p pages) Delete(ctx context.Context, id string) error { return p.kb.Delete(ctx, id) }

func (p pages) Search(ctx context.Context, query, prefix string, limit int) ([]builtin.MemoryHit, error) {
	res, err := p.r.Retrieve(ctx, query)
	if err != nil {
		return nil, err
	}
	var hits []builtin.MemoryHit
	var recalls []knowledge.Recall
	for _, it := range res.Items {
		if len(hits) == limit {
			break
		}
		if !strings.HasPrefix(it.Page.ID, prefix) {
			continue
		}
		hits = append(hits, builtin.MemoryHit{Page: memoryPage(it.Page), Score: it.Score})
		recalls = append(recalls, knowledge.Recall{ID: it.Page.ID, Score: it.Score})
	}
	if len(recalls) > 0 {
		if _, err := p.kb.RecordRecall(ctx, recalls...); err != nil {
			return nil, err
		}
	}
	return hits, nil
}

func memoryPage(p knowledge.Page) builtin.MemoryPage {
	return builtin.MemoryPage{ID: p.ID, Title: p.Title, Content: p.Content, Tags: p.Tags, Updated: p.Updated}
}

// notFound makes a memory error for a missing entry match
// builtin.ErrMemoryNotFound too.
func notFound(err error) error {
	if errors.Is(err, memory.ErrNotFound) {
		return fmt.Errorf("%w: %w", builtin.ErrMemoryNotFound, err)
	}
	return err
}
