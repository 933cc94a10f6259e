package schedule

// This file holds Store, the schedules kept in a memory.Store, with their
// fires and journals.

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/agcore/agcore/memory"
)

// KeyPrefix is the key space of schedules in a memory.Store:
//
//	c/s/<id>                        the Schedule (JSON)
//	c/f/<id>/<N: 8 bytes big-endian>  its fires (JSON)
//	c/e/<id>/<seq: 8 bytes big-endian> its journal (Event, JSON)
//
// Schedule ids hold no '/', so no schedule's keys share a prefix with
// another's.
const KeyPrefix = "c/"

// Retention of a schedule's records.
const (
	// KeepFires is how many fires of a schedule are kept; older ones are
	// removed as new ones are journaled.
	KeepFires = 100
	// KeepEvents is how many journal entries of a schedule are kept.
	KeepEvents = 1000
)

// Errors of the Store.
var (
	// ErrNotFound is returned for a schedule or fire that does not exist.
	ErrNotFound = errors.New("schedule: not found")
	// ErrExists is returned by Create for an id that is taken.
	ErrExists = errors.New("schedule: a schedule with this id exists")
	// ErrNotDue is returned by Fire and Skip for a schedule that is ended
	// or whose next fire time has not come.
	ErrNotDue = errors.New("schedule: not due")
)

// Options configures a Store. The zero value is valid.
type Options struct {
	// Clock tells the time of creations, changes and deletions. Nil means
	// time.Now. The scheduler passes its own time to Fire, Skip, Start and
	// Finish.
	Clock func() time.Time
	// IDs generates the ids of schedules created without one. Nil means
	// "s-" and 12 random hex digits.
	IDs func() string
	// OnEvent, when set, is called with every journal entry once its
	// change is on disk, in order, while the Store holds its write lock:
	// it must be quick and must not call the Store. Nil means none.
	OnEvent func(Event)
}

// Store keeps schedules in a memory.Store. Every change is written in one
// Badger transaction with the journal entry that records it, and synced
// to disk before the call returns (but on an in-memory store). It is safe
// for concurrent use; in one process, use one Store per memory.Store.
type Store struct {
	db      *badger.DB
	sync    bool
	now     func() time.Time
	newID   func() string
	onEvent func(Event)

	// mu serialises writes, so that read-modify-write never conflicts.
	mu sync.Mutex
	// written are the events of the write in progress, under mu.
	written []Event

	subMu sync.Mutex
	subs  map[chan struct{}]struct{}
}

// New returns the schedules kept in store.
func New(store *memory.Store, opts Options) *Store {
	s := &Store{db: store.DB(), now: opts.Clock, newID: opts.IDs, onEvent: opts.OnEvent, subs: map[chan struct{}]struct{}{}}
	s.sync = !s.db.Opts().InMemory
	if s.now == nil {
		s.now = time.Now
	}
	if s.newID == nil {
		s.newID = randomID
	}
	return s
}

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "s-" + hex.EncodeToString(b[:])
}

func scheduleKey(id string) []byte { return []byte(KeyPrefix + "s/" + id) }
func firePrefix(id string) []byte  { return []byte(KeyPrefix + "f/" + id + "/") }
func eventPrefix(id string) []byte { return []byte(KeyPrefix + "e/" + id + "/") }

func seqKey(prefix []byte, n uint64) []byte {
	return binary.BigEndian.AppendUint64(slices.Clip(prefix), n)
}

// FireID returns the id of the n-th fire of schedule id.
func FireID(id string, n int) string { return fmt.Sprintf("%s-%d", id, n) }

// Changes returns a channel that receives a value after Create, Update
// and Delete (several changes may come as one), and a function that stops
// it. The scheduler listens to it to see schedules added while it runs.
func (s *Store) Changes() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.subMu.Lock()
	s.subs[ch] = struct{}{}
	s.subMu.Unlock()
	return ch, func() {
		s.subMu.Lock()
		delete(s.subs, ch)
		s.subMu.Unlock()
	}
}

func (s *Store) notify() {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	for ch := range s.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// write runs f in one transaction under the write lock, then syncs.
func (s *Store) write(ctx context.Context, op string, f func(*badger.Txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written = s.written[:0]
	if err := s.db.Update(f); err != nil {
		return fmt.Errorf("schedule: %s: %w", op, err)
	}
	if s.sync {
		if err := s.db.Sync(); err != nil {
			return fmt.Errorf("schedule: %s: sync: %w", op, err)
		}
	}
	if s.onEvent != nil {
		for _, ev := range s.written {
			s.onEvent(ev)
		}
	}
	return nil
}

func get[T any](txn *badger.Txn, key []byte) (T, error) {
	var v T
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return v, ErrNotFound
	}
	if err != nil {
		return v, err
	}
	err = item.Value(func(b []byte) error { return json.Unmarshal(b, &v) })
	if err != nil {
		return v, fmt.Errorf("decoding %s: %w", key, err)
	}
	return v, nil
}

func put(txn *badger.Txn, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return txn.Set(key, b)
}

// appendEvent journals ev for sc (whose Events it advances) and removes
// the entry that falls out of KeepEvents.
// The caller holds s.mu.
func (s *Store) appendEvent(txn *badger.Txn, sc *Schedule, ev Event) error {
	sc.Events++
	ev.V, ev.Seq, ev.Schedule = EventVersion, sc.Events, sc.ID
	if err := put(txn, seqKey(eventPrefix(sc.ID), sc.Events), ev); err != nil {
		return err
	}
	s.written = append(s.written, ev)
	if sc.Events > KeepEvents {
		return txn.Delete(seqKey(eventPrefix(sc.ID), sc.Events-KeepEvents))
	}
	return nil
}

// Create stores a new schedule with spec, journaled as created. id empty
// means a generated id; by says who creates it (see Schedule.CreatedBy).
// An invalid spec is refused with a *FieldError naming the field.
func (s *Store) Create(ctx context.Context, id string, spec Spec, by string) (Schedule, error) {
	now := s.now().UTC()
	c, err := spec.Validate(now)
	if err != nil {
		return Schedule{}, err
	}
	if id == "" {
		id = s.newID()
	}
	if err := ValidateID(id); err != nil {
		return Schedule{}, err
	}
	sc := Schedule{ID: id, Spec: spec, CreatedBy: by, CreatedAt: now, UpdatedAt: now, State: StateActive}
	next := c.Next(now)
	if err := spec.checkFirst(next); err != nil {
		return Schedule{}, err
	}
	sc.setNext(next)
	err = s.write(ctx, "create "+id, func(txn *badger.Txn) error {
		if _, err := get[Schedule](txn, scheduleKey(id)); err == nil {
			return fmt.Errorf("%w: %q", ErrExists, id)
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		// A deleted schedule's journal is kept: a new one of the same id
		// continues it.
		last, err := lastSeq(txn, eventPrefix(id))
		if err != nil {
			return err
		}
		sc.Events = last
		spec := sc.Spec
		if err := s.appendEvent(txn, &sc, Event{Time: now, Type: EventCreated, Spec: &spec}); err != nil {
			return err
		}
		return put(txn, scheduleKey(id), sc)
	})
	if err != nil {
		return Schedule{}, err
	}
	s.notify()
	return sc, nil
}

// setNext sets the next fire time to next, or ends the schedule when
// there is none or it passes the end date.
func (sc *Schedule) setNext(next time.Time) {
	switch {
	case next.IsZero():
		sc.end(reasonNoFireTime)
	case !sc.EndAt.IsZero() && next.After(sc.EndAt):
		sc.end(reasonEndDate)
	default:
		sc.NextFire = next
	}
}

// checkFirst refuses an end date before the first fire time, next.
func (sp Spec) checkFirst(next time.Time) error {
	if !sp.EndAt.IsZero() && next.After(sp.EndAt) {
		return fieldErr("end_at", "%s comes before the first fire time, %s", sp.EndAt.UTC().Format(time.RFC3339), next.Format(time.RFC3339))
	}
	return nil
}

func (sc *Schedule) end(reason string) {
	sc.State, sc.EndReason, sc.NextFire = StateEnded, reason, time.Time{}
}

// Update replaces the Spec of schedule id, journaled as changed. Its next
// fire time is computed afresh from now; its run count is kept, and an
// ended schedule is active again when the new Spec allows more runs.
func (s *Store) Update(ctx context.Context, id string, spec Spec) (Schedule, error) {
	if err := ValidateID(id); err != nil {
		return Schedule{}, err
	}
	now := s.now().UTC()
	c, err := spec.Validate(now)
	if err != nil {
		return Schedule{}, err
	}
	var sc Schedule
	err = s.write(ctx, "update "+id, func(txn *badger.Txn) error {
		if sc, err = get[Schedule](txn, scheduleKey(id)); err != nil {
			return err
		}
		if spec.MaxRuns != 0 && sc.Runs >= spec.MaxRuns {
			return fieldErr("max_runs", "%d: the schedule has already run %d times", spec.MaxRuns, sc.Runs)
		}
		sc.Spec, sc.UpdatedAt, sc.State, sc.EndReason = spec, now, StateActive, ""
		next := c.Next(now)
		if err := spec.checkFirst(next); err != nil {
			return err
		}
		sc.setNext(next)
		spec := sc.Spec
		if err := s.appendEvent(txn, &sc, Event{Time: now, Type: EventChanged, Spec: &spec}); err != nil {
			return err
		}
		return put(txn, scheduleKey(id), sc)
	})
	if err != nil {
		return Schedule{}, err
	}
	s.notify()
	return sc, nil
}

// Delete removes schedule id and its fires, journaled as deleted (its
// journal is kept). A run in progress goes on; queued fires are dropped.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	now := s.now().UTC()
	err := s.write(ctx, "delete "+id, func(txn *badger.Txn) error {
		sc, err := get[Schedule](txn, scheduleKey(id))
		if err != nil {
			return err
		}
		if err := s.appendEvent(txn, &sc, Event{Time: now, Type: EventDeleted}); err != nil {
			return err
		}
		keys, err := keysUnder(txn, firePrefix(id))
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return txn.Delete(scheduleKey(id))
	})
	if err != nil {
		return err
	}
	s.notify()
	return nil
}

// Get returns schedule id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Schedule, error) {
	if err := ValidateID(id); err != nil {
		return Schedule{}, err
	}
	if err := ctx.Err(); err != nil {
		return Schedule{}, err
	}
	var sc Schedule
	err := s.db.View(func(txn *badger.Txn) (err error) {
		sc, err = get[Schedule](txn, scheduleKey(id))
		return err
	})
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule: get %q: %w", id, err)
	}
	return sc, nil
}

// List returns every schedule, sorted by id.
func (s *Store) List(ctx context.Context) ([]Schedule, error) {
	out, err := scan[Schedule](ctx, s.db, []byte(KeyPrefix+"s/"))
	if err != nil {
		return nil, fmt.Errorf("schedule: list: %w", err)
	}
	return out, nil
}

// Fires returns the fires of schedule id that are kept, oldest first.
func (s *Store) Fires(ctx context.Context, id string) ([]Fire, error) {
	out, err := scan[Fire](ctx, s.db, firePrefix(id))
	if err != nil {
		return nil, fmt.Errorf("schedule: fires of %q: %w", id, err)
	}
	return out, nil
}

// Events returns the journal of schedule id that is kept, oldest first;
// it outlives the schedule's deletion.
func (s *Store) Events(ctx context.Context, id string) ([]Event, error) {
	out, err := scan[Event](ctx, s.db, eventPrefix(id))
	if err != nil {
		return nil, fmt.Errorf("schedule: events of %q: %w", id, err)
	}
	return out, nil
}

// Pending returns the fires that have not finished, running and queued,
// by schedule id and then in fire order.
func (s *Store) Pending(ctx context.Context) ([]Fire, error) {
	all, err := scan[Fire](ctx, s.db, []byte(KeyPrefix+"f/"))
	if err != nil {
		return nil, fmt.Errorf("schedule: pending fires: %w", err)
	}
	return slices.DeleteFunc(all, func(f Fire) bool { return f.Status == FireFinished }), nil
}

func scan[T any](ctx context.Context, db *badger.DB, prefix []byte) ([]T, error) {
	var out []T
	err := db.View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.Prefix = prefix
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var v T
			if err := it.Item().Value(func(b []byte) error { return json.Unmarshal(b, &v) }); err != nil {
				return fmt.Errorf("decoding %q: %w", it.Item().Key(), err)
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

func keysUnder(txn *badger.Txn, prefix []byte) ([][]byte, error) {
	o := badger.DefaultIteratorOptions
	o.Prefix, o.PrefetchValues = prefix, false
	it := txn.NewIterator(o)
	defer it.Close()
	var keys [][]byte
	for it.Rewind(); it.Valid(); it.Next() {
		keys = append(keys, it.Item().KeyCopy(nil))
	}
	return keys, nil
}

func lastSeq(txn *badger.Txn, prefix []byte) (uint64, error) {
	o := badger.DefaultIteratorOptions
	o.Prefix, o.PrefetchValues, o.Reverse = prefix, false, true
	it := txn.NewIterator(o)
	defer it.Close()
	it.Seek(append(slices.Clip(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
	if !it.Valid() {
		return 0, nil
	}
	k := it.Item().Key()
	if len(k) != len(prefix)+8 {
		return 0, fmt.Errorf("%w: schedule journal key %q", memory.ErrCorruptStore, k)
	}
	return binary.BigEndian.Uint64(k[len(prefix):]), nil
}
