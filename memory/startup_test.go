package memory_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
)

// syncBuffer is a log sink safe for Badger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// journalTexts appends one user message per text to session, each in its
// own append (its own transaction), durably.
func journalTexts(t *testing.T, s *memory.Store, session string, texts ...string) {
	t.Helper()
	j := newJournal(t, s, memory.JournalOptions{SnapshotEvery: -1})
	tail, err := j.Tail(t.Context(), session)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		if tail, err = j.Append(t.Context(), session, 0, tail, messages.UserMessage{Message: messages.UserText(text)}); err != nil {
			t.Fatal(err)
		}
	}
}

// userTexts loads session and returns its user messages.
func userTexts(t *testing.T, s *memory.Store, session string) ([]string, error) {
	t.Helper()
	j := newJournal(t, s, memory.JournalOptions{Durability: memory.DurabilityNone})
	st, err := j.Load(t.Context(), session)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range st.History {
		out = append(out, m.Text())
	}
	return out, nil
}

// filesWith returns the names of dir's files with the suffix, sorted.
func filesWith(t *testing.T, dir, suffix string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if strings.HasSuffix(e.Name(), suffix) {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// crashImage copies the files of the live store in dir to a new directory:
// what a SIGKILL leaves on disk (the page cache holds every write).
func crashImage(t *testing.T, dir string) string {
	t.Helper()
	img := t.TempDir()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if !e.Type().IsRegular() || e.Name() == "LOCK" {
			continue
		}
		src, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(img, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		_ = src.Close()
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return img
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpen_AfterInterruptedStart plants the empty files that a process
// killed while Badger opens or closes the store leaves behind (Badger
// creates a file, then sizes it and writes its header): the next Open
// succeeds at once, removes only those empty files, and loses nothing.
func TestOpen_AfterInterruptedStart(t *testing.T) {
	texts := []string{"one", "two", "three"}
	tests := []struct {
		name string
		// crashed leaves the data in the write-ahead log (no clean close).
		crashed bool
		plant   func(t *testing.T, dir string) []string
	}{
		{"empty value log after a clean close", false, func(t *testing.T, dir string) []string {
			touch(t, filepath.Join(dir, "000007.vlog"))
			return []string{"000007.vlog"}
		}},
		{"empty memtable log after a clean close", false, func(t *testing.T, dir string) []string {
			touch(t, filepath.Join(dir, "00009.mem"))
			return []string{"00009.mem"}
		}},
		{"empty value and memtable logs after a crash", true, func(t *testing.T, dir string) []string {
			touch(t, filepath.Join(dir, "000002.vlog"))
			touch(t, filepath.Join(dir, "00002.mem"))
			return []string{"000002.vlog", "00002.mem"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			journalTexts(t, s, "s1", texts...)
			if tt.crashed {
				img := crashImage(t, dir)
				_ = s.Close()
				dir = img
			} else if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			planted := tt.plant(t, dir)
			s, err := memory.Open(memory.Options{Dir: dir})
			if err != nil {
				t.Fatalf("first Open after the interrupted start: %v", err)
			}
			defer s.Close()
			got, err := userTexts(t, s, "s1")
			if err != nil || !slices.Equal(got, texts) {
				t.Fatalf("journal after recovery = %q, %v; want %q", got, err, texts)
			}
			var removed []string
			for _, r := range s.Recoveries() {
				if r.Action == "removed" {
					removed = append(removed, filepath.Base(r.File))
				}
			}
			slices.Sort(removed)
			if !slices.Equal(removed, planted) {
				t.Errorf("Recoveries removed %q, want exactly the planted %q", removed, planted)
			}
			journalTexts(t, s, "s1", "four")
		})
	}
}

// TestOpen_AfterKilledFirstStart is a data directory whose very first start
// was killed: an empty MANIFEST and an empty memtable log.
func TestOpen_AfterKilledFirstStart(t *testing.T) {
	dir := t.TempDir()
	touch(t, filepath.Join(dir, "MANIFEST"))
	touch(t, filepath.Join(dir, "00001.mem"))
	s, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatalf("Open after a killed first start: %v", err)
	}
	journalTexts(t, s, "s1", "hello")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir)
	defer s.Close()
	if got, err := userTexts(t, s, "s1"); err != nil || !slices.Equal(got, []string{"hello"}) {
		t.Fatalf("journal = %q, %v", got, err)
	}
}

// TestOpen_EmptyManifestBesideTables: an empty MANIFEST next to table files
// means the index of the tables is lost. Open refuses, says so, and removes
// nothing (Badger deletes the tables a fresh MANIFEST does not list).
func TestOpen_EmptyManifestBesideTables(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	journalTexts(t, s, "s1", "one")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tables := filesWith(t, dir, ".sst")
	if len(tables) == 0 {
		t.Fatal("no table after a clean close")
	}
	if err := os.Truncate(filepath.Join(dir, "MANIFEST"), 0); err != nil {
		t.Fatal(err)
	}
	_, err := memory.Open(memory.Options{Dir: dir})
	if !errors.Is(err, memory.ErrCorruptStore) {
		t.Fatalf("Open = %v, want ErrCorruptStore", err)
	}
	for _, want := range []string{"MANIFEST", "agcore doctor", dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if got := filesWith(t, dir, ".sst"); !slices.Equal(got, tables) {
		t.Errorf("tables after the refused Open = %q, want %q untouched", got, tables)
	}
	if fi, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil || fi.Size() != 0 {
		t.Errorf("MANIFEST after the refused Open: %v, %v", fi, err)
	}
}

func TestOpen_Locked(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	for _, ro := range []bool{false, true} {
		_, err := memory.Open(memory.Options{Dir: dir, ReadOnly: ro})
		var le *memory.LockedError
		if !errors.As(err, &le) || !errors.Is(err, memory.ErrLocked) || le.PID != os.Getpid() {
			t.Fatalf("Open(ReadOnly=%v) of a store in use = %v, want a LockedError naming pid %d", ro, err, os.Getpid())
		}
		if !strings.Contains(err.Error(), dir) {
			t.Errorf("error %q does not name the directory", err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r1, err := memory.Open(memory.Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := memory.Open(memory.Options{Dir: dir, ReadOnly: true})
	if err != nil {
		t.Fatalf("second reader: %v", err)
	}
	if _, err := memory.Open(memory.Options{Dir: dir}); !errors.Is(err, memory.ErrLocked) {
		t.Fatalf("writer beside readers: %v, want ErrLocked", err)
	}
	for _, r := range []*memory.Store{r1, r2} {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s = openStore(t, dir)
	_ = s.Close()
}

// TestOpen_ReadOnlyNeedsReplay: a store that was not closed cleanly holds a
// write-ahead log only a writer can replay; a read-only Open says so.
func TestOpen_ReadOnlyNeedsReplay(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	journalTexts(t, s, "s1", "one")
	img := crashImage(t, dir)
	_ = s.Close()
	_, err := memory.Open(memory.Options{Dir: img, ReadOnly: true})
	if !errors.Is(err, memory.ErrNeedsReplay) {
		t.Fatalf("read-only Open of a crashed store = %v, want ErrNeedsReplay", err)
	}
	s = openStore(t, img)
	if got, err := userTexts(t, s, "s1"); err != nil || !slices.Equal(got, []string{"one"}) {
		t.Fatalf("journal = %q, %v", got, err)
	}
	_ = s.Close()
	r, err := memory.Open(memory.Options{Dir: img, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only Open after a writer replayed the log: %v", err)
	}
	_ = r.Close()
}

// TestOpen_DamagedWriteAheadLog flips one byte of a journaled message in the
// write-ahead log left by a crash. Badger's replay stops at the damaged
// entry and drops every transaction after it; Open reports that at warn
// level, naming the file and offset, and keeps the dropped bytes aside.
func TestOpen_DamagedWriteAheadLog(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	texts := []string{"first message", "second message", "third message", "fourth message"}
	journalTexts(t, s, "s1", texts...)
	img := crashImage(t, dir)
	_ = s.Close()
	mems := filesWith(t, img, ".mem")
	if len(mems) != 1 {
		t.Fatalf("crash image holds memtable logs %q, want one", mems)
	}
	wal := filepath.Join(img, mems[0])
	b, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, []byte("second message"))
	if at < 0 {
		t.Fatal("the second message is not in the write-ahead log")
	}
	b[at] ^= 0x01
	altered := string(b[at : at+len("second message")])
	if err := os.WriteFile(wal, b, 0o644); err != nil {
		t.Fatal(err)
	}

	var logs syncBuffer
	s, err = memory.Open(memory.Options{Dir: img, Logger: zerolog.New(&logs).Level(zerolog.WarnLevel)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := userTexts(t, s, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got, altered) {
		t.Fatalf("the altered message was replayed: %q", got)
	}
	if !slices.Equal(got, texts[:1]) {
		t.Logf("journal after the damaged log: %q", got)
	}
	line := logs.String()
	if !strings.Contains(line, `"level":"warn"`) || !strings.Contains(line, mems[0]) || !strings.Contains(line, "not replayed") {
		t.Errorf("no warning naming %s; logs:\n%s", mems[0], line)
	}
	var rec *memory.Recovery
	for _, r := range s.Recoveries() {
		if r.Lost {
			rec = &r
		}
	}
	if rec == nil || filepath.Base(rec.File) != mems[0] {
		t.Fatalf("Recoveries = %+v, want the damaged log reported as losing data", s.Recoveries())
	}
	saved := strings.TrimPrefix(rec.Action, "saved to ")
	kept, err := os.ReadFile(saved)
	if err != nil {
		t.Fatalf("dropped bytes not kept (action %q): %v", rec.Action, err)
	}
	for _, text := range texts[2:] {
		if !bytes.Contains(kept, []byte(text)) {
			t.Errorf("the kept bytes lack %q", text)
		}
	}
}

// TestOpen_DamagedTable flips a byte of a journaled tool call's arguments
// in a table file, and truncates a table file: Open refuses the store with
// an error that names the file and says to run agcore doctor, without a
// panic and without ever returning the altered arguments.
func TestOpen_DamagedTable(t *testing.T) {
	tests := []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"flipped byte", func(b []byte) []byte {
			at := bytes.Index(b, []byte("rm -rf build"))
			if at < 0 {
				return nil
			}
			b[at+3] ^= 0x01
			return b
		}},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			j := newJournal(t, s, memory.JournalOptions{})
			call := messages.ToolCallStarted{CallID: "c1", Name: "bash", Arguments: `{"command":"rm -rf build"}`}
			if _, err := j.Append(t.Context(), "s1", 0, 0, call); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			tables := filesWith(t, dir, ".sst")
			if len(tables) != 1 {
				t.Fatalf("tables = %q, want one", tables)
			}
			path := filepath.Join(dir, tables[0])
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b = tt.damage(b)
			if b == nil {
				t.Skip("the table is compressed: the arguments are not stored verbatim")
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err = memory.Open(memory.Options{Dir: dir})
			if err == nil {
				defer s.Close()
				st, lerr := newJournal(t, s, memory.JournalOptions{}).Load(t.Context(), "s1")
				t.Fatalf("Open of a damaged store succeeded; Load = %+v, %v", st, lerr)
			}
			if !errors.Is(err, memory.ErrCorruptStore) {
				t.Errorf("Open = %v, want ErrCorruptStore", err)
			}
			for _, want := range []string{tables[0], "agcore doctor"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// TestOpen_DamagedValueLog stores journal entries in the value log (a low
// value threshold) and flips a byte of one: Load reports a *CorruptError for
// that entry and never returns the altered arguments, whether the file is
// the last value log (replayed at Open) or an older one (read on demand).
func TestOpen_DamagedValueLog(t *testing.T) {
	for _, last := range []bool{true, false} {
		t.Run(fmt.Sprintf("last=%v", last), func(t *testing.T) {
			dir := t.TempDir()
			s, err := memory.OpenWithValueThreshold(memory.Options{Dir: dir}, 64)
			if err != nil {
				t.Fatal(err)
			}
			j := newJournal(t, s, memory.JournalOptions{SnapshotEvery: -1})
			tail, err := j.Append(t.Context(), "s1", 0, 0, messages.UserMessage{Message: messages.UserText("run the build cleanup for me please")})
			if err != nil {
				t.Fatal(err)
			}
			call := messages.ToolCallStarted{CallID: "c1", Name: "bash", Arguments: `{"command":"rm -rf build/output/directory"}`}
			if _, err := j.Append(t.Context(), "s1", 0, tail, call); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if !last {
				// One more open and close: the entries' file is no longer
				// the newest value log.
				s, err = memory.OpenWithValueThreshold(memory.Options{Dir: dir}, 64)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			vlog := filepath.Join(dir, "000001.vlog")
			b, err := os.ReadFile(vlog)
			if err != nil {
				t.Fatal(err)
			}
			at := bytes.Index(b, []byte("rm -rf build"))
			if at < 0 {
				t.Fatal("the tool call is not in the value log")
			}
			b[at+3] ^= 0x01
			if err := os.WriteFile(vlog, b, 0o644); err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			s, err = memory.OpenWithValueThreshold(memory.Options{Dir: dir, Logger: zerolog.New(&logs).Level(zerolog.WarnLevel)}, 64)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			j = newJournal(t, s, memory.JournalOptions{SnapshotEvery: -1})
			st, err := j.Load(t.Context(), "s1")
			var ce *memory.CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, memory.ErrCorrupt) || ce.Session != "s1" || ce.Seq != 2 {
				t.Fatalf("Load = %+v, %v; want a CorruptError at s1 seq 2", st, err)
			}
			for e, err := range j.Read(t.Context(), "s1", 1) {
				if err != nil {
					break
				}
				if tc, ok := e.Event.(messages.ToolCallStarted); ok {
					t.Fatalf("Read returned the tool call: %+v", tc)
				}
			}
			if !strings.Contains(logs.String(), `"level":"error"`) {
				t.Errorf("nothing logged at error level:\n%s", logs.String())
			}
			t.Logf("detected as: %v", err)
		})
	}
}
