package builtin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agcore/agcore/toolsys"
)

// MemoryTools returns memory_write, memory_read, memory_search and
// memory_delete over the stores of o, bridged into toolsys.Tool values.
// Writing and deleting need PermWrite, so they pass the permission
// pipeline as file edits do; reading and searching are PermReadOnly.
func MemoryTools(o MemoryOptions) []toolsys.Tool {
	m := &memory{o: o.withDefaults()}
	return []toolsys.Tool{
		toolsys.Bridge[MemoryWriteParams](&MemoryWrite{m}),
		toolsys.Bridge[MemoryReadParams](&MemoryRead{m}),
		toolsys.Bridge[MemorySearchParams](&MemorySearch{m}),
		toolsys.Bridge[MemoryDeleteParams](&MemoryDelete{m}),
	}
}

// MemoryWriteParams are memory_write's arguments.
type MemoryWriteParams struct {
	Store   string   `json:"store" jsonschema:"description=Where to keep it: session (a note for the rest of this session) or knowledge (a page kept across sessions),enum=session,enum=knowledge"`
	Key     string   `json:"key" jsonschema:"description=Name of the note or page (no '/' and no control characters),minLength=1,maxLength=200"`
	Content string   `json:"content" jsonschema:"description=What to remember"`
	Title   string   `json:"title,omitempty" jsonschema:"description=Title of a knowledge page (it weighs most in search). Default: the key."`
	Tags    []string `json:"tags,omitempty" jsonschema:"description=Tags of a knowledge page"`
}

// MemoryWrite is the memory_write tool: it stores a session note or a
// knowledge page, replacing what the key held.
type MemoryWrite struct{ m *memory }

// Name returns "memory_write".
func (*MemoryWrite) Name() string { return "memory_write" }

// Description tells the model what memory_write does.
func (*MemoryWrite) Description() string {
	return "Remember something: store a note or a page under a key, replacing what the key held. Stores: " + storesText + "."
}

// Permission is PermWrite: memory outlives the call.
func (*MemoryWrite) Permission() toolsys.Permission { return toolsys.PermWrite }

// SecretParams is nil: memory is shown in prompts and kept on disk.
func (*MemoryWrite) SecretParams() []string { return nil }

// Idempotent is true: writing the same content twice leaves the same state.
func (*MemoryWrite) Idempotent() bool { return true }

// RuleSubject is "store:key", so rules such as memory_write(knowledge:*)
// match on it.
func (*MemoryWrite) RuleSubject(p MemoryWriteParams, _ *toolsys.Context) string {
	return p.Store + ":" + p.Key
}

// Execute stores the note or page.
func (t *MemoryWrite) Execute(ctx context.Context, p MemoryWriteParams, tc *toolsys.Context) (toolsys.Result, error) {
	if err := t.m.check(p.Store, tc); err != nil {
		return toolsys.ErrorResult("memory_write: %v", err), nil
	}
	if n := len(p.Content); n > t.m.o.MaxValueBytes {
		return toolsys.ErrorResult("memory_write: content of %d bytes is more than the %d one note or page may hold; shorten it or split it", n, t.m.o.MaxValueBytes), nil
	}
	meta := map[string]any{"store": p.Store, "key": p.Key}
	if p.Store == MemorySession {
		if err := t.m.o.Notes.Set(ctx, tc.SessionID, p.Key, p.Content); err != nil {
			return memoryError(ctx, "memory_write", err)
		}
		return toolsys.Result{Content: fmt.Sprintf("stored session note %q (%d bytes)", p.Key, len(p.Content)), Metadata: meta}, nil
	}
	title := p.Title
	if strings.TrimSpace(title) == "" {
		title = p.Key
	}
	tags := slices.Clone(p.Tags)
	if t.m.o.Scope == ScopeAgent {
		tags = append(tags, "agent:"+tc.Agent)
	}
	page, err := t.m.o.Pages.Put(ctx, MemoryPage{ID: t.m.pageID(tc, p.Key), Title: title, Content: p.Content, Tags: tags})
	if err != nil {
		return memoryError(ctx, "memory_write", err)
	}
	meta["id"] = page.ID
	return toolsys.Result{Content: fmt.Sprintf("stored knowledge page %q (%d bytes)", p.Key, len(p.Content)), Metadata: meta}, nil
}

// MemoryReadParams are memory_read's arguments.
type MemoryReadParams struct {
	Store string `json:"store" jsonschema:"description=session or knowledge,enum=session,enum=knowledge"`
	Key   string `json:"key" jsonschema:"description=Key of the note or page,minLength=1,maxLength=200"`
}

// MemoryRead is the memory_read tool: it returns a note or a page.
type MemoryRead struct{ m *memory }

// Name returns "memory_read".
func (*MemoryRead) Name() string { return "memory_read" }

// Description tells the model what memory_read does.
func (*MemoryRead) Description() string {
	return "Read a note or a page remembered earlier, by its key (memory_search finds keys). Stores: " + storesText + "."
}

// Permission is PermReadOnly.
func (*MemoryRead) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams is nil.
func (*MemoryRead) SecretParams() []string { return nil }

// Execute reads the note or page.
func (t *MemoryRead) Execute(ctx context.Context, p MemoryReadParams, tc *toolsys.Context) (toolsys.Result, error) {
	if err := t.m.check(p.Store, tc); err != nil {
		return toolsys.ErrorResult("memory_read: %v", err), nil
	}
	meta := map[string]any{"store": p.Store, "key": p.Key}
	if p.Store == MemorySession {
		v, err := t.m.o.Notes.Get(ctx, tc.SessionID, p.Key)
		if errors.Is(err, ErrMemoryNotFound) {
			return toolsys.ErrorResult("memory_read: no session note %q", p.Key), nil
		}
		if err != nil {
			return memoryError(ctx, "memory_read", err)
		}
		return toolsys.Result{Content: v, Metadata: meta}, nil
	}
	page, err := t.m.o.Pages.Get(ctx, t.m.pageID(tc, p.Key))
	if errors.Is(err, ErrMemoryNotFound) {
		return toolsys.ErrorResult("memory_read: no knowledge page %q", p.Key), nil
	}
	if err != nil {
		return memoryError(ctx, "memory_read", err)
	}
	meta["title"] = page.Title
	return toolsys.Result{Content: "# " + page.Title + "\n\n" + page.Content, Metadata: meta}, nil
}

// MemorySearchParams are memory_search's arguments.
type MemorySearchParams struct {
	Query string `json:"query" jsonschema:"description=Keywords to look for,minLength=1"`
	Store string `json:"store,omitempty" jsonschema:"description=session or knowledge. Default: both.,enum=session,enum=knowledge"`
	Limit int    `json:"limit,omitempty" jsonschema:"description=Most results per store (1 to 50). Default 10.,minimum=1,maximum=50"`
}

// MemorySearch is the memory_search tool: keyword search over session
// notes (every keyword in the key or the value, case-insensitive) and
// knowledge pages (the knowledge base's ranked retrieval).
type MemorySearch struct{ m *memory }

// Name returns "memory_search".
func (*MemorySearch) Name() string { return "memory_search" }

// Description tells the model what memory_search does.
func (*MemorySearch) Description() string {
	return "Search what was remembered, by keywords; returns keys with a preview (read the whole with memory_read). Stores: " + storesText + "."
}

// Permission is PermReadOnly.
func (*MemorySearch) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams is nil.
func (*MemorySearch) SecretParams() []string { return nil }

// previewBytes caps the preview of one search result.
const previewBytes = 200

// Execute searches the stores the call names.
func (t *MemorySearch) Execute(ctx context.Context, p MemorySearchParams, tc *toolsys.Context) (toolsys.Result, error) {
	if strings.TrimSpace(p.Query) == "" {
		return toolsys.ErrorResult("memory_search: query is empty"), nil
	}
	stores := []string{p.Store}
	if p.Store == "" {
		stores = stores[:0]
		if t.m.o.Notes != nil && tc.SessionID != "" {
			stores = append(stores, MemorySession)
		}
		if t.m.o.Pages != nil {
			stores = append(stores, MemoryKnowledge)
		}
		if len(stores) == 0 {
			return toolsys.ErrorResult("memory_search: no store is available to this call"), nil
		}
	}
	limit := p.Limit
	if limit <= 0 {
		limit = t.m.o.MaxResults
	}
	limit = min(limit, MaxMemoryResults)
	var b strings.Builder
	found := 0
	for _, store := range stores {
		if err := t.m.check(store, tc); err != nil {
			return toolsys.ErrorResult("memory_search: %v", err), nil
		}
		var n int
		var err error
		if store == MemorySession {
			n, err = t.searchNotes(ctx, &b, p.Query, limit, tc)
		} else {
			n, err = t.searchPages(ctx, &b, p.Query, limit, tc)
		}
		if err != nil {
			return memoryError(ctx, "memory_search", err)
		}
		found += n
	}
	meta := map[string]any{"results": found}
	if found == 0 {
		return toolsys.Result{Content: fmt.Sprintf("nothing remembered matches %q", p.Query), Metadata: meta}, nil
	}
	return toolsys.Result{Content: b.String(), Metadata: meta}, nil
}

// searchNotes writes the session notes holding every keyword of query.
func (t *MemorySearch) searchNotes(ctx context.Context, b *strings.Builder, query string, limit int, tc *toolsys.Context) (int, error) {
	notes, err := t.m.o.Notes.List(ctx, tc.SessionID)
	if err != nil {
		return 0, err
	}
	words := strings.Fields(strings.ToLower(query))
	n := 0
	for _, note := range notes {
		text := strings.ToLower(note.Key + "\n" + note.Value)
		if !allIn(words, text) {
			continue
		}
		if n == limit {
			break
		}
		fmt.Fprintf(b, "[session] %s: %s\n", note.Key, preview(note.Value))
		n++
	}
	return n, nil
}

// searchPages writes the caller's knowledge pages that match query.
func (t *MemorySearch) searchPages(ctx context.Context, b *strings.Builder, query string, limit int, tc *toolsys.Context) (int, error) {
	hits, err := t.m.o.Pages.Search(ctx, query, t.m.prefix(tc), limit)
	if err != nil {
		return 0, err
	}
	for _, h := range hits {
		fmt.Fprintf(b, "[knowledge] %s (score %.2f): %s — %s\n", t.m.keyOf(tc, h.Page.ID), h.Score, preview(h.Page.Title), preview(h.Page.Content))
	}
	return len(hits), nil
}

// allIn reports whether every word occurs in text.
func allIn(words []string, text string) bool {
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// preview is s on one line, capped at previewBytes.
func preview(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= previewBytes {
		return s
	}
	return string(cutUTF8([]byte(s), previewBytes)) + "…"
}

// MemoryDeleteParams are memory_delete's arguments.
type MemoryDeleteParams struct {
	Store string `json:"store" jsonschema:"description=session or knowledge,enum=session,enum=knowledge"`
	Key   string `json:"key" jsonschema:"description=Key of the note or page to forget,minLength=1,maxLength=200"`
}

// MemoryDelete is the memory_delete tool: it forgets a note or a page.
type MemoryDelete struct{ m *memory }

// Name returns "memory_delete".
func (*MemoryDelete) Name() string { return "memory_delete" }

// Description tells the model what memory_delete does.
func (*MemoryDelete) Description() string {
	return "Forget a note or a page, by its key. Stores: " + storesText + "."
}

// Permission is PermWrite.
func (*MemoryDelete) Permission() toolsys.Permission { return toolsys.PermWrite }

// SecretParams is nil.
func (*MemoryDelete) SecretParams() []string { return nil }

// Idempotent is true: forgetting twice forgets once.
func (*MemoryDelete) Idempotent() bool { return true }

// RuleSubject is "store:key".
func (*MemoryDelete) RuleSubject(p MemoryDeleteParams, _ *toolsys.Context) string {
	return p.Store + ":" + p.Key
}

// Execute deletes the note or page; it says whether there was one.
func (t *MemoryDelete) Execute(ctx context.Context, p MemoryDeleteParams, tc *toolsys.Context) (toolsys.Result, error) {
	if err := t.m.check(p.Store, tc); err != nil {
		return toolsys.ErrorResult("memory_delete: %v", err), nil
	}
	meta := map[string]any{"store": p.Store, "key": p.Key}
	var existed bool
	var err error
	if p.Store == MemorySession {
		if _, err = t.m.o.Notes.Get(ctx, tc.SessionID, p.Key); err == nil {
			existed = true
			err = t.m.o.Notes.Delete(ctx, tc.SessionID, p.Key)
		}
	} else {
		id := t.m.pageID(tc, p.Key)
		if _, err = t.m.o.Pages.Get(ctx, id); err == nil {
			existed = true
			err = t.m.o.Pages.Delete(ctx, id)
		}
	}
	if err != nil && !errors.Is(err, ErrMemoryNotFound) {
		return memoryError(ctx, "memory_delete", err)
	}
	meta["deleted"] = existed
	if !existed {
		return toolsys.Result{Content: fmt.Sprintf("nothing to forget: no %s entry %q", p.Store, p.Key), Metadata: meta}, nil
	}
	return toolsys.Result{Content: fmt.Sprintf("forgot %s entry %q", p.Store, p.Key), Metadata: meta}, nil
}

// memoryError turns a store's failure into the call's answer: a fault of
// the runtime (a Go error) when the call was cancelled, and otherwise an
// error result the model reads (an invalid key, a value too large, a full
// disk).
func memoryError(ctx context.Context, tool string, err error) (toolsys.Result, error) {
	if ctx.Err() != nil {
		return toolsys.Result{}, fmt.Errorf("%s: %w", tool, err)
	}
	return toolsys.ErrorResult("%s: %v", tool, err), nil
}

// The memory tools implement the typed contract and the optional
// interfaces they are meant to.
var (
	_ toolsys.Typed[MemoryWriteParams]               = (*MemoryWrite)(nil)
	_ toolsys.Typed[MemoryReadParams]                = (*MemoryRead)(nil)
	_ toolsys.Typed[MemorySearchParams]              = (*MemorySearch)(nil)
	_ toolsys.Typed[MemoryDeleteParams]              = (*MemoryDelete)(nil)
	_ toolsys.TypedRuleSubjecter[MemoryWriteParams]  = (*MemoryWrite)(nil)
	_ toolsys.TypedRuleSubjecter[MemoryDeleteParams] = (*MemoryDelete)(nil)
	_ toolsys.IdempotentTool                         = (*MemoryWrite)(nil)
	_ toolsys.IdempotentTool                         = (*MemoryDelete)(nil)
)
