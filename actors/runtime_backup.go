package actors

// This file holds Runtime.Backup.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agcore/agcore/memory"
)

// ErrNoStore is returned by Backup for a runtime that holds no store of
// its own: one built on Config.Journal, or by NewInMemory.
var ErrNoStore = errors.New("actors: the runtime has no store to back up (it was given a Journal, or keeps its journal in memory)")

// Backup writes a copy of the runtime's store (journals, session memory,
// knowledge) as of one moment to w, while sessions keep running: see
// memory.Store.Backup. `agcore restore` and memory.Restore read it back.
// It is the way to back up a store a running process holds open, since no
// other process can open it meanwhile. A NewInMemory runtime has no store:
// its Backup fails with ErrNoStore.
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
