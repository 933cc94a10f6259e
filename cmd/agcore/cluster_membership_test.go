package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agcore/agcore/memory/jetstream"
	"github.com/agcore/agcore/memory/jetstream/natstest"
)

// TestClusterCommands_NATSMembership runs two `agcore cluster member
// --membership nats` processes that know nothing of each other, only the
// NATS server: `cluster submit` and `cluster status` find them through
// the membership bucket; `agcore serve --cluster --membership nats` joins
// them there; and a member stopped with SIGTERM deletes its key, so that
// status lists only the others.
func TestClusterCommands_NATSMembership(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	srv := natstest.RunServer(t, natstest.Options{})
	nc := natstest.Connect(t, srv.URL())
	if _, err := jetstream.New(ctx, jetstream.Config{Conn: nc}); err != nil {
		t.Fatal(err)
	}
	if _, err := jetstream.NewSessionMemory(ctx, jetstream.SessionMemoryConfig{Conn: nc}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "script.yaml")
	cfgPath := filepath.Join(dir, "agcore.yaml")
	writeFile(t, script, "stateless: true\nrules:\n  - match: {any: true}\n    reply: {text: answer through the bucket}\n")
	writeFile(t, cfgPath, fmt.Sprintf("default_model: mock/scripted\nproviders:\n  - name: mock\n    type: scripted\n    script: %s\n", script))
	env := []string{"AGCORE_DATA_DIR=" + filepath.Join(dir, "data")}
	membership := []string{"--membership", "nats", "--nats", srv.URL(), "--refresh", "200ms", "--membership-ttl", "1m"}

	type member struct {
		cmd  *exec.Cmd
		addr string
		done chan error
	}
	var members []*member
	for i := range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		m := &member{addr: addr, done: make(chan error, 1)}
		args := append([]string{"--config", cfgPath, "cluster", "member", "--member-addr", addr, "--node", fmt.Sprintf("m%d", i+1)}, membership...)
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
					select {
					case joined <- sc.Text():
					default:
					}
				}
			}
			m.done <- m.cmd.Wait()
		}()
		select {
		case line := <-joined:
			if !strings.Contains(line, "membership on bucket agcore_members on NATS") {
				t.Errorf("member line %q does not name the bucket", line)
			}
		case err := <-m.done:
			t.Fatalf("member %d exited before joining: %v", i+1, err)
		case <-ctx.Done():
			t.Fatalf("member %d did not join: %v", i+1, ctx.Err())
		}
		members = append(members, m)
	}

	for i := range 4 {
		execBin(t, bin, dir, "", env, append([]string{"cluster", "submit", fmt.Sprintf("nm-%d", i), "hello", "--turn-id", "t-1"}, membership...)...).
			check(t, exitOK, "answer through the bucket\n")
	}
	status := func() []string {
		t.Helper()
		r := execBin(t, bin, dir, "", env, append([]string{"cluster", "status", "--json"}, membership...)...)
		r.check(t, exitOK)
		var st clusterStatus
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, r.stdout)
		}
		var addrs []string
		for _, m := range st.Members {
			addrs = append(addrs, m.Address)
		}
		slices.Sort(addrs)
		return addrs
	}
	want := []string{members[0].addr, members[1].addr}
	slices.Sort(want)
	if got := status(); !slices.Equal(got, want) {
		t.Errorf("status lists members %v, want %v", got, want)
	}

	// agcore serve --cluster --membership nats joins through the same
	// bucket, and leaves it on SIGTERM.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveAddr := l.Addr().String()
	l.Close()
	serve := exec.Command(bin, "--config", cfgPath, "serve", "--addr", "127.0.0.1:0", "--cluster", srv.URL(), "--membership", "nats",
		"--member-addr", serveAddr, "--node", "s1", "--cluster-refresh", "200ms", "--membership-ttl", "1m")
	serve.Dir, serve.Env, serve.Stderr = dir, append(userEnv(), append(env, "AGCORE_TOKEN=membership-test")...), os.Stderr
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	serveDone := make(chan error, 1)
	t.Cleanup(func() {
		_ = serve.Process.Kill()
		<-serveDone
	})
	joined := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "joined cluster") {
				select {
				case joined <- sc.Text():
				default:
				}
			}
		}
		serveDone <- serve.Wait()
	}()
	select {
	case line := <-joined:
		if !strings.Contains(line, "member "+serveAddr) || !strings.Contains(line, "membership on bucket agcore_members on NATS") {
			t.Errorf("serve's line %q does not name its address and the bucket", line)
		}
	case err := <-serveDone:
		serveDone <- err
		t.Fatalf("serve exited before joining: %v", err)
	case <-ctx.Done():
		t.Fatalf("serve did not join: %v", ctx.Err())
	}
	withServe := append(slices.Clone(want), serveAddr)
	slices.Sort(withServe)
	if got := status(); !slices.Equal(got, withServe) {
		t.Errorf("status with serve lists members %v, want %v", got, withServe)
	}
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-serveDone:
		serveDone <- err
	case <-ctx.Done():
		t.Fatalf("serve did not stop on SIGTERM: %v", ctx.Err())
	}
	if got := status(); !slices.Equal(got, want) {
		t.Errorf("status after serve left lists %v, want %v", got, want)
	}

	if err := members[1].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-members[1].done:
		if err != nil {
			t.Errorf("member 2 after SIGTERM: %v", err)
		}
		members[1].done <- err
	case <-ctx.Done():
		t.Fatalf("member 2 did not stop on SIGTERM: %v", ctx.Err())
	}
	// The TTL is a minute: only the deleted key explains its absence.
	if got := status(); !slices.Equal(got, []string{members[0].addr}) {
		t.Errorf("status after member 2 left lists %v, want only %s", got, members[0].addr)
	}
}

// TestClusterMembership_Usage refuses membership flags that cannot work,
// naming the flag, on `agcore cluster` and `agcore serve --cluster`.
func TestClusterMembership_Usage(t *testing.T) {
	serve := []string{"serve", "--cluster", "nats://127.0.0.1:1", "--member-addr", "127.0.0.1:7001"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown membership", []string{"cluster", "status", "--membership", "etcd"}, `--membership "etcd"`},
		{"nats without --nats", []string{"cluster", "status", "--membership", "nats"}, "--nats is required with --membership nats"},
		{"nats with seeds", []string{"cluster", "submit", "s", "hi", "--membership", "nats", "--nats", "nats://127.0.0.1:1", "--seed", "127.0.0.1:1"}, "--seed is not used"},
		{"ttl with seeds", []string{"cluster", "status", "--seed", "127.0.0.1:1", "--membership-ttl", "2s"}, "--membership-ttl needs --membership nats"},
		{"member with a health port", []string{"cluster", "member", "--membership", "nats", "--nats", "nats://127.0.0.1:1", "--member-addr", "127.0.0.1:2", "--health-port", "3"}, "--health-port is not used"},
		{"serve: membership without --cluster", []string{"serve", "--membership", "nats"}, "--membership needs --cluster"},
		{"serve: nats with seeds", append(slices.Clone(serve), "--membership", "nats", "--seed", "127.0.0.1:1"), "--seed is not used"},
		{"serve: nats with a health port", append(slices.Clone(serve), "--membership", "nats", "--health-port", "7101"), "--health-port is not used"},
		{"serve: negative ttl", append(slices.Clone(serve), "--membership", "nats", "--membership-ttl", "-1s"), "--membership-ttl"},
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
