package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/knowledge"
	"github.com/agcore/agcore/messages"
)

// seedStore journals a turn with a tool call in each of the sessions and
// stores a knowledge page, in a new data directory.
func seedStore(t *testing.T, sessions ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	j, err := memory.NewJournal(store, memory.JournalOptions{SnapshotEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range sessions {
		call := messages.ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":"make release"}`}
		if _, err := j.Append(t.Context(), id, 0, 0,
			messages.UserMessage{Turn: 0, TurnID: id + "-t0", Message: messages.UserText("release it")},
			messages.AssistantMessage{Turn: 0, Message: messages.Message{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{call}}},
			messages.ToolCallStarted{Turn: 0, CallID: "c1", Name: "bash", Arguments: call.Arguments},
			messages.ToolResult{Turn: 0, CallID: "c1", Name: "bash", Content: "released"},
			messages.AssistantMessage{Turn: 0, Message: messages.AssistantText("Released.")},
			messages.TurnCompleted{Turn: 0, TurnID: id + "-t0", Outcome: messages.OutcomeCompleted}); err != nil {
			t.Fatal(err)
		}
	}
	kb, err := knowledge.New(store, knowledge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kb.Create(t.Context(), knowledge.Page{ID: "p1", Title: "Release checklist", Content: "tag, build, publish"}); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// alterEntry flips one bit of the first byte of needle in entry seq of
// session, bypassing every check.
func alterEntry(t *testing.T, dir, session string, seq uint64, needle string) {
	t.Helper()
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	key := binary.BigEndian.AppendUint64([]byte("j/"+session+"/"), seq)
	err = store.DB().Update(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		at := bytes.Index(v, []byte(needle))
		if at < 0 {
			return fmt.Errorf("%q not in entry %d", needle, seq)
		}
		v[at] ^= 0x01
		return txn.Set(key, v)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDoctor_Clean(t *testing.T) {
	dir := seedStore(t, "s1", "s2")
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "doctor")
	if code != exitOK {
		t.Fatalf("doctor on a sound store: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"opened read-only", "2 of 2 journals sound", "1 pages", "disk space", "bash confinement: bash and bash_process", "no damage found"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
}

// TestDoctor_DamagedSession alters a journaled tool call: doctor names the
// session and entry and exits 1; --repair quarantines the session, after
// which doctor and the sessions command see a sound store.
func TestDoctor_DamagedSession(t *testing.T) {
	dir := seedStore(t, "good", "bad")
	alterEntry(t, dir, "bad", 3, "release")

	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "doctor")
	if code != exitError {
		t.Fatalf("doctor on a damaged store: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"bad seq 3: corrupt journal entry: checksum mismatch", "1 of 2 journals sound"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "doctor --repair") {
		t.Errorf("stderr does not say how to repair:\n%s", stderr)
	}

	code, stdout, _ = runCLI(t.Context(), t, nil, "--data-dir", dir, "doctor", "--json")
	var rep doctorReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout)
	}
	if code != exitError || len(rep.Damaged) != 1 || !strings.Contains(rep.Damaged[0], "session bad seq 3") || rep.Sessions != 2 || !rep.Repairable {
		t.Fatalf("--json report = %+v (exit %d)", rep, code)
	}

	code, stdout, stderr = runCLI(t.Context(), t, nil, "--data-dir", dir, "doctor", "--repair")
	if code != exitOK || !strings.Contains(stdout, "session bad: journal quarantined") {
		t.Fatalf("doctor --repair: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t.Context(), t, nil, "--data-dir", dir, "doctor")
	if code != exitOK || !strings.Contains(stdout, "bad quarantined at") || !strings.Contains(stdout, "1 of 1 journals sound") {
		t.Fatalf("doctor after the repair: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t.Context(), t, nil, "--data-dir", dir, "sessions", "list", "--json")
	if code != exitOK || !strings.Contains(stdout, `"good"`) || strings.Contains(stdout, `"bad"`) {
		t.Fatalf("sessions list after the repair: exit %d\n%s", code, stdout)
	}
}

// TestDoctor_DamagedTable truncates a table file: doctor names it and says
// to restore a backup, and the sessions command fails with a clean error
// naming the file and doctor, never a panic.
func TestDoctor_DamagedTable(t *testing.T) {
	dir := seedStore(t, "s1")
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no table file")
	}
	b, err := os.ReadFile(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tables[0], b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "sessions", "list")
	if code != exitError || strings.Contains(stderr, "goroutine") || !strings.Contains(stderr, filepath.Base(tables[0])) || !strings.Contains(stderr, "agcore doctor") {
		t.Fatalf("sessions list on a truncated table: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t.Context(), t, nil, "--data-dir", dir, "doctor")
	if code != exitError || !strings.Contains(stdout, filepath.Base(tables[0])) || !strings.Contains(stderr, "restore the latest backup") {
		t.Fatalf("doctor on a truncated table: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestDoctor_InUse: doctor does not read a store another process has open.
func TestDoctor_InUse(t *testing.T) {
	dir := seedStore(t, "s1")
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	code, _, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "doctor")
	if code != exitError || !strings.Contains(stderr, "in use") || !strings.Contains(stderr, fmt.Sprint(os.Getpid())) {
		t.Fatalf("doctor on a store in use: exit %d\n%s", code, stderr)
	}
}

// TestBackupRestoreCLI backs a data directory up to a file, restores it
// into an empty one (refusing a non-empty one and a damaged file), and
// reads the sessions back.
func TestBackupRestoreCLI(t *testing.T) {
	dir := seedStore(t, "s1", "s2", "s3")
	file := filepath.Join(t.TempDir(), "agcore.backup")
	code, _, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "backup", "--output", file)
	if code != exitOK || !strings.Contains(stderr, "backup of") {
		t.Fatalf("backup: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(file + ".partial"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left behind: %v", err)
	}

	target := filepath.Join(t.TempDir(), "restored")
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", target, "restore", file)
	if code != exitOK || !strings.Contains(stdout, "3 sessions") || !strings.Contains(stdout, "1 knowledge pages") {
		t.Fatalf("restore: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t.Context(), t, nil, "--data-dir", target, "doctor")
	if code != exitOK {
		t.Fatalf("doctor on the restored store: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = runCLI(t.Context(), t, nil, "--data-dir", target, "sessions", "show", "s2")
	if code != exitOK || !strings.Contains(stdout, "Released.") {
		t.Fatalf("sessions show on the restored store: exit %d\n%s", code, stdout)
	}

	code, _, stderr = runCLI(t.Context(), t, nil, "--data-dir", target, "restore", file)
	if code != exitError || !strings.Contains(stderr, "not empty") {
		t.Fatalf("restore into a non-empty directory: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	damaged := filepath.Join(t.TempDir(), "damaged.backup")
	if err := os.WriteFile(damaged, b, 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	code, _, stderr = runCLI(t.Context(), t, nil, "--data-dir", empty, "restore", damaged)
	if code != exitError || !strings.Contains(stderr, "checksum mismatch") {
		t.Fatalf("restore of a damaged backup: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("the refused restore created %s", empty)
	}
}

// TestBackup_InUse: agcore backup cannot read a store another process has
// open, and says how to back it up instead.
// TestBackup_WhileServing backs up a data directory that a running agcore
// serve holds open, through the server's control socket, then restores it
// elsewhere: the restored store is sound and holds the session the server
// created.
func TestBackup_WhileServing(t *testing.T) {
	dir := seedStore(t, "s1")
	ctx, cancel := context.WithCancel(t.Context())
	url, done := startServe(t, ctx, "--data-dir", dir)
	if code, body := request(t, "POST", url+"/v1/sessions", "", `{"id":"live"}`); code != http.StatusCreated {
		t.Fatalf("create session: %d %s", code, body)
	}
	file := filepath.Join(t.TempDir(), "live.backup")
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "backup", "--output", file)
	if code != exitOK {
		t.Fatalf("backup while serving: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, controlSocket)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the control socket outlived the server: %v", err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if code, _, stderr := runCLI(t.Context(), t, nil, "--data-dir", restored, "restore", file); code != exitOK {
		t.Fatalf("restore: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t.Context(), t, nil, "--data-dir", restored, "sessions", "list")
	if code != exitOK || !strings.Contains(stdout, "s1") || !strings.Contains(stdout, "live") {
		t.Fatalf("sessions of the restored store: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestBackup_InUse(t *testing.T) {
	dir := seedStore(t, "s1")
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	code, stdout, stderr := runCLI(t.Context(), t, nil, "--data-dir", dir, "backup")
	if code != exitError || stdout != "" || !strings.Contains(stderr, "Runtime.Backup") || !strings.Contains(stderr, "in use") || !strings.Contains(stderr, controlSocket) {
		t.Fatalf("backup of a store in use: exit %d\nstdout: %q\nstderr: %s", code, stdout, stderr)
	}
}
