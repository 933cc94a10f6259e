package natstest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// childEnv names the environment variable that turns a test binary into a
// NATS server process (see ServeIfChild).
const childEnv = "AGCORE_NATSTEST_SERVER"

// childConfig is what a server process is told to run.
type childConfig struct {
	Name        string   `json:"name"`
	Port        int      `json:"port"`
	ClusterPort int      `json:"cluster_port"`
	Routes      []string `json:"routes"`
	StoreDir    string   `json:"store_dir"`
	SyncAlways  bool     `json:"sync_always"`
}

// ServeIfChild runs a NATS server and exits when the test binary was
// started as a server process by RunProcessCluster; otherwise it returns at
// once. Call it first thing in TestMain:
//
//	func TestMain(m *testing.M) {
//		natstest.ServeIfChild()
//		os.Exit(m.Run())
//	}
//
// The server prints "ready" on its standard output once it accepts
// connections, and exits when its standard input closes (its parent ended)
// or it is killed.
func ServeIfChild() {
	raw := os.Getenv(childEnv)
	if raw == "" {
		return
	}
	var cfg childConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "natstest: %s: %v\n", childEnv, err)
		os.Exit(2)
	}
	s, err := server.NewServer(&server.Options{
		ServerName: cfg.Name,
		Host:       "127.0.0.1",
		Port:       cfg.Port,
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		SyncAlways: cfg.SyncAlways,
		NoLog:      true,
		NoSigs:     true,
		Cluster:    server.ClusterOpts{Name: "agcore-test", Host: "127.0.0.1", Port: cfg.ClusterPort},
		Routes:     server.RoutesFromStr(strings.Join(cfg.Routes, ",")),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "natstest: new server: %v\n", err)
		os.Exit(2)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		fmt.Fprintln(os.Stderr, "natstest: server not ready within 10s")
		os.Exit(2)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Shutdown()
	os.Exit(0)
}

// Process is a NATS server running in a child process.
type Process struct {
	Name string
	URL  string
	cmd  *exec.Cmd
}

// Kill sends SIGKILL to the server process and waits for it to end: the
// server gets no chance to hand over what it leads.
func (p *Process) Kill() error {
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	_ = p.cmd.Wait()
	return nil
}

// ProcessCluster is a cluster of server processes.
type ProcessCluster struct {
	Procs []*Process
}

// URLs is the client URLs of every server, comma-separated.
func (c *ProcessCluster) URLs() string {
	urls := make([]string, len(c.Procs))
	for i, p := range c.Procs {
		urls[i] = p.URL
	}
	return strings.Join(urls, ",")
}

// ByName returns the process of the named server, or nil.
func (c *ProcessCluster) ByName(name string) *Process {
	for _, p := range c.Procs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// RunProcessCluster starts n servers, each in a child process of the test
// binary (whose TestMain calls ServeIfChild), routed to each other on
// 127.0.0.1, and waits until each is ready (or ctx ends). The processes are
// killed with t.Cleanup. Unlike RunCluster's servers, these can be killed
// with SIGKILL.
func RunProcessCluster(ctx context.Context, t testing.TB, n int, o Options) *ProcessCluster {
	t.Helper()
	clientPorts, clusterPorts := make([]int, n), make([]int, n)
	routes := make([]string, n)
	for i := range n {
		clientPorts[i], clusterPorts[i] = freePort(t), freePort(t)
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", clusterPorts[i])
	}
	c := &ProcessCluster{}
	for i := range n {
		cfg := childConfig{Name: fmt.Sprintf("n%d", i+1), Port: clientPorts[i], ClusterPort: clusterPorts[i],
			Routes: routes, StoreDir: t.TempDir(), SyncAlways: o.SyncAlways}
		raw, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatalf("natstest: start server process %s: %v", cfg.Name, err)
		}
		p := &Process{Name: cfg.Name, URL: fmt.Sprintf("nats://127.0.0.1:%d", cfg.Port), cmd: cmd}
		t.Cleanup(func() {
			stdin.Close()
			_ = p.Kill()
		})
		ready := make(chan error, 1)
		go func() {
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err == nil && strings.TrimSpace(line) != "ready" {
				err = fmt.Errorf("said %q", line)
			}
			ready <- err
		}()
		select {
		case err := <-ready:
			if err != nil {
				t.Fatalf("natstest: server process %s: %v", cfg.Name, err)
			}
		case <-ctx.Done():
			t.Fatalf("natstest: server process %s not ready: %v", cfg.Name, ctx.Err())
		}
		c.Procs = append(c.Procs, p)
	}
	return c
}
