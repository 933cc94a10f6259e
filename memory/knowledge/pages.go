package knowledge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dgraph-io/badger/v4"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/memory"
)

// Page is a knowledge page: a unit of knowledge an agent writes and later
// retrieves.
type Page struct {
	// ID identifies the page: 1 to MaxIDBytes bytes of valid UTF-8, without
	// '/' or control characters.
	ID string `json:"id"`
	// Title is the page's title; it weighs most in retrieval.
	Title string `json:"title"`
	// Summary is a short abstract; it weighs second in retrieval.
	Summary string `json:"summary,omitempty"`
	// Content is the body of the page.
	Content string `json:"content,omitempty"`
	// Tags label the page; see Base.ListByTag. Each tag follows the rules of
	// an id.
	Tags []string `json:"tags,omitempty"`
	// References are free-form pointers (URLs, page ids, file paths).
	References []string `json:"references,omitempty"`
	// Created is set when the page is first written (a non-zero Created given
	// to Create, Insert or Upsert of a new page is kept) and never changes.
	Created time.Time `json:"created"`
	// Updated is set on every write.
	Updated time.Time `json:"updated"`
	// AccessCount is how many times the page was returned by a retrieval. It
	// is kept beside the page (so that a recall does not rewrite it) and
	// ignored on writes.
	AccessCount int64 `json:"access_count"`
}

// MaxIDBytes is the longest page id or tag, in bytes.
const MaxIDBytes = 200

// Options configures a Base. The zero value is valid: wall clock, random ids,
// no eviction.
type Options struct {
	// Clock gives the time of writes and recalls. Nil means time.Now. Badger
	// decides TTL expiry against the wall clock (see Policy).
	Clock func() time.Time
	// IDs generates the id of a page given to Insert. Nil means 16 random hex
	// digits.
	IDs func() string
	// Eviction is the eviction policy. The zero Policy never evicts.
	Eviction Policy
	// Logger receives diagnostics. The zero Logger discards them.
	Logger zerolog.Logger
}

// Base stores knowledge pages in a memory.Store, under memory.PrefixKnowledge,
// together with their tag index and their inverted index. Every page write
// updates both indexes in the same Badger transaction, so they never disagree
// with the pages. A Base is safe for concurrent use.
//
// Reading a page (Get, List, ListByTag) does not change its AccessCount; a
// Retriever counts the pages it returns through RecordRecall.
type Base struct {
	db     *badger.DB
	clock  func() time.Time
	ids    func() string
	policy Policy
	log    zerolog.Logger

	// mu is held shared by writes and queries and exclusively by Rebuild,
	// which replaces the derived keys wholesale.
	mu     sync.RWMutex
	writes atomic.Int64 // page writes, for Policy.CheckInterval
	// recallMu serialises RecordRecall: every query records recalls of its
	// top pages, so concurrent queries update the same statistics keys, and
	// optimistic transactions would keep losing to each other.
	recallMu sync.Mutex
}

// New returns a Base over store. It fails when store is nil or the eviction
// policy is invalid. When the store holds pages whose derived keys (scoring
// records and postings) were written in an older layout, New rebuilds them
// first (see Base.Rebuild); this happens once, on the first open after an
// upgrade.
func New(store *memory.Store, opts Options) (*Base, error) {
	if store == nil {
		return nil, &InvalidError{Field: "store", Value: "<nil>", Reason: "a memory.Store is required"}
	}
	policy, err := opts.Eviction.normalized()
	if err != nil {
		return nil, err
	}
	b := &Base{db: store.DB(), clock: opts.Clock, ids: opts.IDs, policy: policy, log: opts.Logger}
	if b.clock == nil {
		b.clock = time.Now
	}
	if b.ids == nil {
		b.ids = randomID
	}
	if err := b.checkFormat(); err != nil {
		return nil, err
	}
	return b, nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// putMode says what a write expects of the existing page.
type putMode int

const (
	modeCreate putMode = iota // the page must not exist
	modeUpdate                // the page must exist
	modeUpsert                // either
)

func (m putMode) String() string {
	return [...]string{"create", "update", "upsert"}[m]
}

// Create stores a new page. It fails with an *InvalidError naming the field
// when the id or a tag is invalid, and with ErrExists when the id is taken.
// It returns the page as stored (Created and Updated set).
func (b *Base) Create(ctx context.Context, p Page) (Page, error) {
	return b.put(ctx, p, modeCreate)
}

// Insert stores a new page under a fresh id from Options.IDs; p.ID must be
// empty.
func (b *Base) Insert(ctx context.Context, p Page) (Page, error) {
	if p.ID != "" {
		return Page{}, &InvalidError{Field: "id", Value: p.ID, Reason: "Insert assigns the id; use Create"}
	}
	p.ID = b.ids()
	return b.put(ctx, p, modeCreate)
}

// Update replaces an existing page, keeping its Created time. It fails with
// an error wrapping ErrNotFound when the page does not exist.
func (b *Base) Update(ctx context.Context, p Page) (Page, error) {
	return b.put(ctx, p, modeUpdate)
}

// Upsert creates the page or replaces it.
func (b *Base) Upsert(ctx context.Context, p Page) (Page, error) {
	return b.put(ctx, p, modeUpsert)
}

func (b *Base) put(ctx context.Context, p Page, mode putMode) (Page, error) {
	if err := ctx.Err(); err != nil {
		return Page{}, err
	}
	if err := validatePage(&p); err != nil {
		return Page{}, err
	}
	p.Tags = slices.Clone(p.Tags)
	p.References = slices.Clone(p.References)
	var out Page
	b.mu.RLock()
	err := b.update(func(txn *badger.Txn) error {
		q := p
		old, oldItem, err := loadPage(txn, q.ID)
		exists := err == nil || errors.Is(err, ErrCorrupt)
		switch {
		case err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt):
			return err
		case mode == modeCreate && exists:
			return ErrExists
		case mode == modeUpdate && !exists:
			return ErrNotFound
		}
		now := b.clock()
		switch {
		case old != nil:
			q.Created = old.Created
		case q.Created.IsZero():
			q.Created = now
		}
		q.Updated = now
		stats, err := loadStats(txn, q.ID)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			return err // a corrupt record is replaced by the next recall
		}
		q.AccessCount = stats.recalls
		var oldExpiry uint64
		if oldItem != nil {
			oldExpiry = oldItem.ExpiresAt()
		}
		if err := b.writePage(txn, &q, old, oldExpiry); err != nil {
			return err
		}
		out = q
		return nil
	})
	b.mu.RUnlock()
	if err != nil {
		return Page{}, fmt.Errorf("knowledge: %s page %q: %w", mode, p.ID, err)
	}
	if err := b.afterWrite(ctx); err != nil {
		return out, err
	}
	return out, nil
}

// writePage writes p, its scoring record and its derived keys, deleting the
// derived keys of old (the page it replaces, nil if none) that p no longer
// has.
func (b *Base) writePage(txn *badger.Txn, p, old *Page, oldExpiry uint64) error {
	expires := b.policy.expiresAt(p.Created)
	raw, err := marshalPage(p)
	if err != nil {
		return err
	}
	if err := setEntry(txn, pageKey(p.ID), raw, expires); err != nil {
		return err
	}
	doc := newDocRecord(p)
	if err := setEntry(txn, docKey(p.ID), doc.marshal(), expires); err != nil {
		return err
	}
	if err := b.refreshStatsExpiry(txn, p.ID, expires); err != nil {
		return err
	}
	keys := derivedKeys(p, doc.bigrams)
	var oldKeys map[string][]byte
	if old != nil {
		oldKeys = derivedKeys(old, newDocRecord(old).bigrams)
		for k := range oldKeys {
			if _, keep := keys[k]; !keep {
				if err := txn.Delete([]byte(k)); err != nil {
					return err
				}
			}
		}
	}
	for k, v := range keys {
		if ov, had := oldKeys[k]; had && bytes.Equal(ov, v) && oldExpiry == expires {
			continue // unchanged key
		}
		if err := setEntry(txn, []byte(k), v, expires); err != nil {
			return err
		}
	}
	return nil
}

// marshalPage encodes p as stored: its access count lives in its recall
// statistics, not in the page.
func marshalPage(p *Page) ([]byte, error) {
	stored := *p
	stored.AccessCount = 0
	return json.Marshal(&stored)
}

// refreshStatsExpiry gives an existing recall record the page's expiry.
func (b *Base) refreshStatsExpiry(txn *badger.Txn, id string, expires uint64) error {
	item, err := txn.Get(statsKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if item.ExpiresAt() == expires {
		return nil
	}
	v, err := item.ValueCopy(nil)
	if err != nil {
		return err
	}
	return setEntry(txn, statsKey(id), v, expires)
}

// derivedKeys returns the keys derived from p and their values: its
// creation-order key and its tag keys (empty values) and its postings (see
// postingKey, postingValue and titlePostingValue). counts are the bigram
// counts of its scored fields (docRecord.bigrams).
func derivedKeys(p *Page, counts [3]int) map[string][]byte {
	keys := make(map[string][]byte)
	keys[string(createdKey(p.Created, p.ID))] = nil
	for _, tag := range p.Tags {
		keys[string(tagKey(tag, p.ID))] = nil
	}
	fields := [...]struct {
		f    byte
		text string
	}{
		{fieldTitle, p.Title},
		{fieldSummary, p.Summary},
		{fieldTags, joinTags(p.Tags)},
		{fieldContent, p.Content},
	}
	value := postingValue(counts)
	titleValue := titlePostingValue(counts, encodeBigramSet(bigramSet(normalize(p.Title))))
	for _, fd := range fields {
		rank := postingRank(fd.f, counts)
		v := value
		if fd.f == fieldTitle {
			v = titleValue
		}
		for _, term := range Keywords(fd.text) {
			keys[string(postingKey(term, fd.f, rank, p.ID))] = v
		}
	}
	return keys
}

func joinTags(tags []string) string {
	var buf bytes.Buffer
	for _, t := range tags {
		buf.WriteString(t)
		buf.WriteByte(' ')
	}
	return buf.String()
}

func setEntry(txn *badger.Txn, key, value []byte, expires uint64) error {
	e := badger.NewEntry(key, value)
	e.ExpiresAt = expires
	return txn.SetEntry(e)
}

// maxAttempts bounds the retries of a transaction that lost a conflict.
const maxAttempts = 16

// update runs fn in a read-write transaction, retrying on conflicts.
func (b *Base) update(fn func(*badger.Txn) error) error {
	for attempt := 1; ; attempt++ {
		err := b.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) || attempt == maxAttempts {
			return err
		}
	}
}

// Get returns the page with the given id, or an error wrapping ErrNotFound.
// It does not count as an access.
func (b *Base) Get(ctx context.Context, id string) (Page, error) {
	if err := ctx.Err(); err != nil {
		return Page{}, err
	}
	if err := validateID("id", id); err != nil {
		return Page{}, err
	}
	var p Page
	err := b.db.View(func(txn *badger.Txn) error {
		var err error
		p, err = readPage(txn, id)
		return err
	})
	if err != nil {
		return Page{}, fmt.Errorf("knowledge: get page %q: %w", id, err)
	}
	return p, nil
}

// Delete removes a page, its recall statistics and its index entries.
// Deleting a missing page is not an error.
func (b *Base) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := validateID("id", id); err != nil {
		return err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := b.update(func(txn *badger.Txn) error { return deletePage(txn, id) }); err != nil {
		return fmt.Errorf("knowledge: delete page %q: %w", id, err)
	}
	return nil
}

// deletePage removes the page id and everything derived from it. The
// postings of a page whose record is corrupt cannot be listed; they are
// skipped by queries and removed by Rebuild.
func deletePage(txn *badger.Txn, id string) error {
	old, _, err := loadPage(txn, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil && !errors.Is(err, ErrCorrupt):
		return err
	}
	for _, k := range [][]byte{pageKey(id), docKey(id), statsKey(id)} {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	if old == nil {
		return nil
	}
	for k := range derivedKeys(old, newDocRecord(old).bigrams) {
		if err := txn.Delete([]byte(k)); err != nil {
			return err
		}
	}
	return nil
}

// loadPage reads and decodes the stored page id, without its access count.
// It returns errors wrapping ErrNotFound or ErrCorrupt; for ErrCorrupt the
// item is returned.
func loadPage(txn *badger.Txn, id string) (*Page, *badger.Item, error) {
	item, err := txn.Get(pageKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	p, err := decodePage(item, id)
	if err != nil {
		return nil, item, err
	}
	return p, item, nil
}

func decodePage(item *badger.Item, id string) (*Page, error) {
	var p Page
	err := item.Value(func(v []byte) error { return json.Unmarshal(v, &p) })
	if err != nil {
		return nil, fmt.Errorf("%w: page %q: %w", ErrCorrupt, id, err)
	}
	if p.ID != id {
		return nil, fmt.Errorf("%w: page %q holds id %q", ErrCorrupt, id, p.ID)
	}
	return &p, nil
}

// readPage returns the page id with its access count.
func readPage(txn *badger.Txn, id string) (Page, error) {
	p, _, err := loadPage(txn, id)
	if err != nil {
		return Page{}, err
	}
	s, err := loadStats(txn, id)
	if err != nil {
		return Page{}, err
	}
	p.AccessCount = s.recalls
	return *p, nil
}

// Count returns the number of pages.
func (b *Base) Count(ctx context.Context) (int, error) {
	n := 0
	err := b.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixCreated)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("knowledge: count pages: %w", err)
	}
	return n, nil
}

// listChunk is how many pages List and ListByTag read per transaction; no
// transaction stays open while the caller's loop body runs.
const listChunk = 128

// List returns the pages with an id greater than after (all pages when after
// is empty), in id order. To read page by page, stop the loop and call List
// again with the last id seen. A page that cannot be decoded yields an error
// wrapping ErrCorrupt and the listing goes on.
func (b *Base) List(ctx context.Context, after string) iter.Seq2[Page, error] {
	return b.scan(ctx, []byte(prefixPage), after, func(txn *badger.Txn, key []byte) (Page, bool, error) {
		id := string(key[len(prefixPage):])
		p, err := readPage(txn, id)
		if err != nil {
			return Page{}, false, fmt.Errorf("knowledge: list page %q: %w", id, err)
		}
		return p, true, nil
	})
}

// ListByTag returns the pages tagged with tag (exactly), in id order, after
// the id after as List does.
func (b *Base) ListByTag(ctx context.Context, tag, after string) iter.Seq2[Page, error] {
	if err := validateID("tag", tag); err != nil {
		return func(yield func(Page, error) bool) { yield(Page{}, err) }
	}
	prefix := tagPrefix(tag)
	return b.scan(ctx, prefix, after, func(txn *badger.Txn, key []byte) (Page, bool, error) {
		id := string(key[len(prefix):])
		p, err := readPage(txn, id)
		switch {
		case errors.Is(err, ErrNotFound):
			return Page{}, false, nil // the page expired or was removed
		case err != nil:
			return Page{}, false, fmt.Errorf("knowledge: list tag %q page %q: %w", tag, id, err)
		}
		return p, true, nil
	})
}

// scan iterates the keys under prefix after prefix+after in chunks, loading
// a page per key.
func (b *Base) scan(ctx context.Context, prefix []byte, after string,
	load func(*badger.Txn, []byte) (Page, bool, error)) iter.Seq2[Page, error] {
	type result struct {
		p   Page
		err error
	}
	return func(yield func(Page, error) bool) {
		last := append(slices.Clip(prefix), after...)
		for {
			if err := ctx.Err(); err != nil {
				yield(Page{}, err)
				return
			}
			var chunk []result
			keys := 0
			err := b.db.View(func(txn *badger.Txn) error {
				it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
				defer it.Close()
				for it.Seek(last); it.Valid() && keys < listChunk; it.Next() {
					key := it.Item().Key()
					if bytes.Equal(key, last) {
						continue
					}
					keys++
					p, ok, err := load(txn, key)
					if ok || err != nil {
						chunk = append(chunk, result{p, err})
					}
					last = slices.Clone(key)
				}
				return nil
			})
			if err != nil {
				yield(Page{}, fmt.Errorf("knowledge: list: %w", err))
				return
			}
			for _, r := range chunk {
				if !yield(r.p, r.err) {
					return
				}
			}
			if keys < listChunk {
				return
			}
		}
	}
}

// validatePage checks the id and tags of p.
func validatePage(p *Page) error {
	if err := validateID("id", p.ID); err != nil {
		return err
	}
	for i, tag := range p.Tags {
		if err := validateID(fmt.Sprintf("tags[%d]", i), tag); err != nil {
			return err
		}
	}
	return nil
}

// validateID checks a page id or a tag.
func validateID(field, s string) error {
	reason := ""
	switch {
	case s == "":
		reason = "empty"
	case len(s) > MaxIDBytes:
		reason = fmt.Sprintf("longer than %d bytes", MaxIDBytes)
	case !utf8.ValidString(s):
		reason = "not valid UTF-8"
	default:
		for _, r := range s {
			if r == '/' {
				reason = "contains '/'"
				break
			}
			if unicode.IsControl(r) {
				reason = "contains a control character"
				break
			}
		}
	}
	if reason == "" {
		return nil
	}
	return &InvalidError{Field: field, Value: s, Reason: reason}
}
