package wasm

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys"
)

// DefaultDebounce is how long a watched folder must stay quiet after a
// change before it is scanned again.
const DefaultDebounce = 200 * time.Millisecond

// FolderConfig configures a Folder.
type FolderConfig struct {
	// Dir is the folder of .wasm files. Required.
	Dir string
	// Registry receives the tools, with source wasm. Required.
	Registry *toolsys.Registry
	// Debounce is how long the folder must stay quiet after a change
	// before Watch scans it, so that a file still being written is not
	// loaded half-way. Zero means DefaultDebounce.
	Debounce time.Duration
	// OnChange is told of each change Sync makes, from the goroutine that
	// makes it, while the folder is locked: it must not block nor call
	// the Folder. Nil means none.
	OnChange func(Change)
	// Logger receives a line per change. The zero Logger discards.
	Logger zerolog.Logger
}

// ChangeKind says what a Change did.
type ChangeKind int

// The kinds of Change.
const (
	// Added registered a tool of a new file.
	Added ChangeKind = iota + 1
	// Replaced registered the new version of a file in place of the old.
	Replaced
	// Removed unregistered the tool of a file that is gone, or that no
	// longer loads.
	Removed
	// Refused says a file could not be made a tool (Change.Err says why).
	Refused
)

// String names the kind.
func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "added"
	case Replaced:
		return "replaced"
	case Removed:
		return "removed"
	case Refused:
		return "refused"
	}
	return fmt.Sprintf("ChangeKind(%d)", int(k))
}

// Change is one change a scan made to the registry.
type Change struct {
	Kind ChangeKind
	// Path is the .wasm file.
	Path string
	// Tool is the tool's name (for Refused, when it is known).
	Tool string
	// Err is why a file was refused: a *LoadError.
	Err error
}

// Folder keeps a registry in step with a folder of .wasm files: each file
// that loads is a tool registered with source wasm; a new file is
// registered, a changed one recompiled and registered again, a removed one
// unregistered. A file that does not load (its help text breaks the
// convention, its name is taken, it is not a WASI command) is refused with
// an error naming it, and the rest of the folder still loads.
//
// Only files named *.wasm count, and not those whose name starts with
// "." (so that a tool can be copied in under a dot-name and renamed into
// place). A Folder is safe for concurrent use.
type Folder struct {
	rt  *Runtime
	cfg FolderConfig

	mu    sync.Mutex            // one scan at a time; guards files
	files map[string]*fileState // by path

	watchMu sync.Mutex
	stop    context.CancelFunc
	done    chan struct{}
	closed  bool
}

// fileState is what the folder knows of one file.
type fileState struct {
	stamp stamp
	sum   [32]byte
	// tool is the file's tool, when it loaded; registered says whether it
	// is the one in the registry (it may wait for its name to be free).
	tool       *Tool
	registered bool
	// old is the registered tool of the file's previous version, which
	// the next registration pass replaces with tool.
	old *Tool
	// err is why the file is refused, if it is.
	err error
}

// stamp identifies a version of a file without reading it.
type stamp struct {
	size  int64
	mtime time.Time
	inode uint64
}

// Folder returns a folder bound to cfg.Registry. Nothing is loaded until
// Sync or Watch.
func (r *Runtime) Folder(cfg FolderConfig) (*Folder, error) {
	switch {
	case cfg.Dir == "":
		return nil, errors.New("wasm: FolderConfig.Dir is empty")
	case cfg.Registry == nil:
		return nil, errors.New("wasm: FolderConfig.Registry is nil")
	case cfg.Debounce < 0:
		return nil, fmt.Errorf("wasm: FolderConfig.Debounce must not be negative, got %s", cfg.Debounce)
	case cfg.Debounce == 0:
		cfg.Debounce = DefaultDebounce
	}
	return &Folder{rt: r, cfg: cfg, files: map[string]*fileState{}}, nil
}

// Dir is the folder.
func (f *Folder) Dir() string { return f.cfg.Dir }

// Tools returns the names of the tools the folder has registered, sorted.
func (f *Folder) Tools() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, st := range f.files {
		if st.registered {
			out = append(out, st.tool.Name())
		}
	}
	slices.Sort(out)
	return out
}

// Refused returns why each refused file is refused (each a *LoadError),
// sorted by path.
func (f *Folder) Refused() []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused()
}

// refused is Refused; the caller holds f.mu.
func (f *Folder) refused() []error {
	var out []error
	for _, p := range slices.Sorted(maps.Keys(f.files)) {
		if err := f.files[p].err; err != nil {
			out = append(out, err)
		}
	}
	return out
}

// Sync scans the folder once and brings the registry in step with it. It
// returns why each file of the folder that does not load is refused (the
// *LoadErrors of Refused, joined), or an error reading the folder; either
// way every file that loads is registered. A folder that does not exist
// holds no tools.
func (f *Folder) Sync(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files == nil {
		return errors.New("wasm: folder closed")
	}
	paths, err := f.list()
	if err != nil {
		return err
	}
	present := map[string]bool{}
	for _, p := range paths {
		present[p] = true
		f.refresh(ctx, p)
	}
	for p, st := range f.files {
		if !present[p] {
			f.drop(ctx, p, st)
			delete(f.files, p)
		}
	}
	f.register(ctx)
	return errors.Join(f.refused()...)
}

// list returns the paths of the candidate files, sorted.
func (f *Folder) list() ([]string, error) {
	entries, err := os.ReadDir(f.cfg.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("wasm: reading the tool folder: %w", err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".wasm") || e.IsDir() {
			continue
		}
		out = append(out, filepath.Join(f.cfg.Dir, n))
	}
	return out, nil
}

// refresh loads the file at p again if it changed; the caller holds f.mu.
func (f *Folder) refresh(ctx context.Context, p string) {
	st := f.files[p]
	fi, err := os.Stat(p)
	if err != nil {
		f.refuse(ctx, p, &fileState{err: &LoadError{Path: p, Err: err}})
		return
	}
	s := stampOf(fi)
	if st != nil && st.stamp == s {
		return
	}
	data, err := readModule(p, f.rt.cfg.MaxFileSize)
	if err != nil {
		f.refuse(ctx, p, &fileState{err: &LoadError{Path: p, Err: err}})
		return
	}
	sum := sha256.Sum256(data)
	if st != nil && st.sum == sum {
		st.stamp = s
		return
	}
	t, err := f.rt.load(ctx, p, data)
	if err != nil && ctx.Err() != nil {
		return // stopped, not refused: the next scan tries again
	}
	if err != nil {
		f.refuse(ctx, p, &fileState{stamp: s, sum: sum, err: err})
		return
	}
	next := &fileState{stamp: s, sum: sum, tool: t}
	if st != nil {
		switch {
		case st.registered:
			next.old = st.tool // replaced by the registration pass
		case st.old != nil:
			next.old = st.old
			_ = st.tool.Close(ctx)
		case st.tool != nil:
			_ = st.tool.Close(ctx)
		}
	}
	f.files[p] = next
}

// refuse replaces the state of p with next, a refusal, unregistering the
// tool of an earlier version; the caller holds f.mu. A refusal that was
// reported already is not reported again.
func (f *Folder) refuse(ctx context.Context, p string, next *fileState) {
	st := f.files[p]
	f.files[p] = next
	if st != nil {
		f.drop(ctx, p, st)
		if st.tool == nil && st.err != nil && st.err.Error() == next.err.Error() {
			return
		}
	}
	f.emit(Change{Kind: Refused, Path: p, Err: next.err})
}

// drop unregisters and closes the tools of a state that is gone.
func (f *Folder) drop(ctx context.Context, p string, st *fileState) {
	for _, t := range []*Tool{st.old, st.tool} {
		if t == nil {
			continue
		}
		if t == st.old || st.registered {
			f.unregister(t)
			f.emit(Change{Kind: Removed, Path: p, Tool: t.Name()})
		}
		_ = t.Close(ctx)
	}
}

// register registers every loaded tool that is not yet, in path order,
// in place of the file's previous version; a tool whose name is taken is
// refused until a later scan finds the name free.
func (f *Folder) register(ctx context.Context) {
	for _, p := range slices.Sorted(maps.Keys(f.files)) {
		st := f.files[p]
		if st.tool == nil || st.registered {
			continue
		}
		replaced := st.old != nil
		if replaced {
			f.unregister(st.old)
			_ = st.old.Close(ctx)
		}
		err := f.cfg.Registry.Register(st.tool, toolsys.WithSource(toolsys.SourceWASM))
		if err == nil {
			kind := Added
			if replaced {
				kind = Replaced
			}
			st.registered, st.old, st.err = true, nil, nil
			f.emit(Change{Kind: kind, Path: p, Tool: st.tool.Name()})
			continue
		}
		if replaced {
			f.emit(Change{Kind: Removed, Path: p, Tool: st.old.Name()})
			st.old = nil
		}
		if errors.Is(err, toolsys.ErrDuplicateTool) {
			err = fmt.Errorf("%w: %q is registered by %s; rename one of them", ErrNameTaken, st.tool.Name(), f.owner(st.tool.Name()))
		}
		refusal := &LoadError{Path: p, Err: err}
		if st.err == nil || st.err.Error() != refusal.Error() {
			f.emit(Change{Kind: Refused, Path: p, Tool: st.tool.Name(), Err: refusal})
		}
		st.err = refusal
	}
}

// owner describes the tool registered under name.
func (f *Folder) owner(name string) string {
	info, ok := f.cfg.Registry.Info(name)
	if !ok {
		return "unknown"
	}
	if wt, isWASM := info.Tool.(*Tool); isWASM {
		return "the wasm file " + wt.Path()
	}
	return "a tool of source " + info.Source.String()
}

// unregister removes t from the registry if the registry holds this very
// tool.
func (f *Folder) unregister(t *Tool) {
	if cur, ok := f.cfg.Registry.Get(t.Name()); ok && cur == toolsys.Tool(t) {
		f.cfg.Registry.Unregister(t.Name())
	}
}

// emit logs c and passes it to OnChange.
func (f *Folder) emit(c Change) {
	ev := f.cfg.Logger.Info()
	if c.Kind == Refused {
		ev = f.cfg.Logger.Warn().Err(c.Err)
	}
	ev.Str("path", c.Path).Str("tool", c.Tool).Str("change", c.Kind.String()).Msg("wasm tool folder")
	if f.cfg.OnChange != nil {
		f.cfg.OnChange(c)
	}
}

// Close stops watching, unregisters the folder's tools and closes them
// (calls in flight finish first), without reporting these as changes. It
// is idempotent.
func (f *Folder) Close() error {
	f.stopWatching()
	f.mu.Lock()
	defer f.mu.Unlock()
	ctx := context.Background()
	for _, st := range f.files {
		for _, t := range []*Tool{st.old, st.tool} {
			if t != nil {
				f.unregister(t)
				_ = t.Close(ctx)
			}
		}
	}
	f.files = nil
	return nil
}
