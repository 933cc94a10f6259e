package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agcore/agcore/memory/jetstream"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
)

// TestClusterCommands runs two `agcore cluster member` processes over a
// journal on three NATS servers, sends turns to sessions with `agcore
// cluster submit` (one of them twice with the same turn id), and reads
// `agcore cluster status`: every session runs once, on one member, and
// the status lists both members with their sessions and the journal's
// stream leaders. The members stop cleanly on SIGTERM.
func TestClusterCommands(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c := natstest.RunCluster(ctx, t, 3, natstest.Options{})
	nc := natstest.Connect(t, c.URLs())
	// The streams and the bucket are created once, before the members.
	j, err := jetstream.New(ctx, jetstream.Config{Conn: nc, Streams: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jetstream.NewSessionMemory(ctx, jetstream.SessionMemoryConfig{Conn: nc}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	script := filepath.Join(dir, "script.yaml")
	cfgPath := filepath.Join(dir, "agcore.yaml")
	writeFile(t, script, `stateless: true
rules:
  - match: {role: tool}
    reply: {text: after the tool}
  - match: {role: user, contains: write}
    reply:
      tool_calls:
        - {name: write_file, arguments: {path: written.txt, content: x}}
  - match: {any: true}
    reply: {text: answer from the cluster}
`)
	writeFile(t, cfgPath, fmt.Sprintf("default_model: mock/scripted\nproviders:\n  - name: mock\n    type: scripted\n    script: %s\n", script))
	env := []string{"AGCORE_DATA_DIR=" + filepath.Join(dir, "data")}

	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	health := []int{port(), port()}
	var seeds []string
	for _, h := range health {
		seeds = append(seeds, "--seed", "127.0.0.1:"+strconv.Itoa(h))
	}
	seeds = append(seeds, "--refresh", "200ms")

	type member struct {
		cmd  *exec.Cmd
		addr string
		done chan error
	}
	var members []*member
	for i, h := range health {
		m := &member{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port())), done: make(chan error, 1)}
		args := append([]string{"--config", cfgPath, "cluster", "member", "--nats", c.URLs(), "--member-addr", m.addr,
			"--health-port", strconv.Itoa(h), "--node", fmt.Sprintf("m%d", i+1), "--streams", "2"}, seeds...)
		m.cmd = exec.Command(bin, args...)
		m.cmd.Dir, m.cmd.Env, m.cmd.Stderr = dir, append(userEnv(), env...), os.Stderr
		out, err := m.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := m.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = m.cmd.Process.Kill()
			<-m.done
		})
		joined := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "joined cluster") {
					joined <- sc.Text()
				}
			}
			m.done <- m.cmd.Wait()
		}()
		select {
		case line := <-joined:
			if !strings.Contains(line, "member "+m.addr+" (m"+strconv.Itoa(i+1)+")") {
				t.Errorf("member line %q does not name %s", line, m.addr)
			}
		case err := <-m.done:
			t.Fatalf("member %d exited before joining: %v", i+1, err)
		case <-ctx.Done():
			t.Fatalf("member %d did not join: %v", i+1, ctx.Err())
		}
		members = append(members, m)
	}

	var sessions []string
	for i := range 6 {
		id := fmt.Sprintf("cs-%d", i)
		sessions = append(sessions, id)
		execBin(t, bin, dir, "", env, append([]string{"cluster", "submit", id, "hello", "--turn-id", "t-1"}, seeds...)...).
			check(t, exitOK, "answer from the cluster\n")
	}
	// A call that needs approval is refused on a member: no one can give it.
	execBin(t, bin, dir, "", env, append([]string{"cluster", "submit", "cs-w", "please write"}, seeds...)...).
		check(t, exitOK, "after the tool\n")
	if _, err := os.Stat(filepath.Join(dir, "written.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("write_file ran on a member without approval: %v", err)
	}
	sessions = append(sessions, "cs-w")
	slices.Sort(sessions)
	// The same turn id again: reported, not run again.
	r := execBin(t, bin, dir, "", env, append([]string{"cluster", "submit", "cs-0", "hello again", "--turn-id", "t-1", "--json"}, seeds...)...)
	r.check(t, exitOK)
	var reply struct {
		Result struct {
			Turn   int    `json:"turn"`
			TurnID string `json:"turn_id"`
			Text   string `json:"text"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &reply); err != nil || reply.Result.Turn != 0 || reply.Result.TurnID != "t-1" {
		t.Errorf("resubmission = %q (%v), want turn 0, t-1", r.stdout, err)
	}
	users := 0
	for e, err := range j.Read(ctx, "cs-0", 1) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := e.Event.(messages.UserMessage); ok {
			users++
		}
	}
	if users != 1 {
		t.Errorf("cs-0 journaled %d user messages, want 1", users)
	}

	r = execBin(t, bin, dir, "", env, append([]string{"cluster", "status", "--json", "--nats", c.URLs()}, seeds...)...)
	r.check(t, exitOK)
	var st clusterStatus
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	var listed []string
	var addrs []string
	for _, m := range st.Members {
		if m.Error != "" {
			t.Errorf("member %s: %s", m.Address, m.Error)
		}
		addrs = append(addrs, m.Address)
		listed = append(listed, m.Sessions...)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, sessions) {
		t.Errorf("status lists sessions %v, want each of %v once", listed, sessions)
	}
	want := []string{members[0].addr, members[1].addr}
	slices.Sort(want)
	if !slices.Equal(addrs, want) {
		t.Errorf("status lists members %v, want %v", addrs, want)
	}
	if len(st.Streams) != 2 {
		t.Errorf("status lists streams %+v, want the journal's 2", st.Streams)
	}
	for _, s := range st.Streams {
		if s.Leader == "" || len(s.Replicas) != 2 {
			t.Errorf("stream %+v: want a leader and 2 replicas", s)
		}
	}
	execBin(t, bin, dir, "", env, append([]string{"cluster", "status", "--nats", c.URLs()}, seeds...)...).
		check(t, exitOK, "MEMBER", members[0].addr, members[1].addr, "STREAM", "AGCORE_JOURNAL_0", "AGCORE_JOURNAL_1")

	for i, m := range members {
		if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-m.done:
			if err != nil {
				t.Errorf("member %d after SIGTERM: %v", i+1, err)
			}
			m.done <- err // for the cleanup
		case <-ctx.Done():
			t.Fatalf("member %d did not stop on SIGTERM: %v", i+1, ctx.Err())
		}
	}
}

// TestClusterCommands_Usage refuses command lines that cannot work, naming
// the flag.
func TestClusterCommands_Usage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"status without seeds", []string{"cluster", "status"}, "--seed is required"},
		{"member without nats", []string{"cluster", "member", "--seed", "127.0.0.1:1"}, "--nats is required"},
		{"member without health port", []string{"cluster", "member", "--seed", "127.0.0.1:1", "--nats", "nats://127.0.0.1:1", "--member-addr", "127.0.0.1:2"}, "--health-port is required"},
		{"member with a bad address", []string{"cluster", "member", "--seed", "127.0.0.1:1", "--nats", "nats://127.0.0.1:1", "--member-addr", "nohost"}, "--member-addr"},
		{"bad seed", []string{"cluster", "status", "--seed", "nohost"}, `--seed "nohost"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			code := run(t.Context(), tc.args, &out, &errOut, func(string) string { return "" })
			if code != exitUsage || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %d naming %s", code, errOut.String(), exitUsage, tc.want)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
