package actors

// This file holds Runtime.Backup.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agcore/agcore/memory"
)

// ErrNoStore is returned by Backup for a runtime built on Config.Journal,
// which holds no store of its own.
var ErrNoStore = errors.New("actors: the runtime has no store (it was given a Journal)")

// Backup writes a copy of the runtime's store (journals, session memory,
// knowledge) as of one moment to w, while sessions keep running: see
// memory.Store.Backup. `agcore restore` and memory.Restore read it back.
// It is the way to back up a store a running process holds open, since no
// other process can open it meanwhile. A NewInMemory runtime's store holds
// its session memory, not its journals (they are in a memory.MemoryJournal):
// its backup copies that.
func (rt *Runtime) Backup(ctx context.Context, w io.Writer) (memory.BackupInfo, error) {
	store := rt.ownStore
	if store == nil {
		store = rt.cfg.Store
	}
	if store == nil {
		return memory.BackupInfo{}, ErrNoStore
	}
	rt.mu.Lock()
	closed := rt.closed
	rt.mu.Unlock()
	if closed {
		return memory.BackupInfo{}, ErrClosed
	}
	info, err := store.Backup(ctx, w)
	if err != nil {
		return info, fmt.Errorf("actors: backup: %w", err)
	}
	return info, nil
}
