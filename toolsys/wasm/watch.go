package wasm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/tetratelabs/wazero/sys"
)

// Watch arms a watch on the folder, scans it (see Sync), and then keeps
// the registry in step with it in the background until ctx ends or Close
// is called: each change of a .wasm file (or a lost event) schedules a
// new scan once the folder has been quiet for the debounce interval. It
// returns once the watch is armed and the first scan done; what that scan
// refused is in Refused and was told to OnChange. An error means the
// folder cannot be watched (it does not exist, say); nothing is left
// running then.
//
// Watch uses the platform's file notifications (inotify on Linux): a
// change is seen at once, at no cost while nothing changes. Folders on
// network file systems may not deliver them; call Sync there instead.
func (f *Folder) Watch(ctx context.Context) error {
	f.watchMu.Lock()
	defer f.watchMu.Unlock()
	switch {
	case f.closed:
		return errors.New("wasm: folder closed")
	case f.stop != nil:
		return errors.New("wasm: the folder is watched already")
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("wasm: watching %s: %w", f.cfg.Dir, err)
	}
	if err := w.Add(f.cfg.Dir); err != nil {
		_ = w.Close()
		return fmt.Errorf("wasm: watching %s: %w", f.cfg.Dir, err)
	}
	lctx, cancel := context.WithCancel(ctx)
	f.stop, f.done = cancel, make(chan struct{})
	if err := f.Sync(lctx); err != nil {
		f.cfg.Logger.Debug().Err(err).Msg("wasm tool folder: first scan refused files")
	}
	go f.loop(lctx, w, f.done)
	return nil
}

// loop turns notifications into debounced scans.
func (f *Folder) loop(ctx context.Context, w *fsnotify.Watcher, done chan<- struct{}) {
	defer close(done)
	defer w.Close()
	quiet := time.NewTimer(f.cfg.Debounce)
	quiet.Stop()
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if f.relevant(ev.Name) {
				quiet.Reset(f.cfg.Debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			// Events may have been lost (a queue overflow): scan again.
			f.cfg.Logger.Warn().Err(err).Str("dir", f.cfg.Dir).Msg("wasm tool folder: watch error; scanning again")
			quiet.Reset(f.cfg.Debounce)
		case <-quiet.C:
			if err := f.Sync(ctx); err != nil {
				f.cfg.Logger.Debug().Err(err).Msg("wasm tool folder: scan refused files")
			}
		}
	}
}

// relevant reports whether a notification about path can change the
// folder's tools: a candidate file, or the folder itself.
func (f *Folder) relevant(path string) bool {
	if filepath.Clean(path) == filepath.Clean(f.cfg.Dir) {
		return true
	}
	base := filepath.Base(path)
	return strings.HasSuffix(base, ".wasm") && !strings.HasPrefix(base, ".")
}

// stopWatching stops the loop, if it runs, and waits for it; the folder
// can no longer be watched afterwards.
func (f *Folder) stopWatching() {
	f.watchMu.Lock()
	defer f.watchMu.Unlock()
	f.closed = true
	if f.stop != nil {
		f.stop()
		<-f.done
	}
}

// stampOf is the stamp of a file's FileInfo.
func stampOf(fi os.FileInfo) stamp {
	return stamp{size: fi.Size(), mtime: fi.ModTime(), inode: uint64(sys.NewStat_t(fi).Ino)}
}
