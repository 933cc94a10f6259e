// Package natstest runs NATS servers with JetStream inside a test process,
// on 127.0.0.1, for the tests of the JetStream journal and of what is built
// on it: one server (RunServer), or a cluster of them (RunCluster) for
// replicated streams. Everything started is shut down with t.Cleanup.
package natstest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Options configures the servers. The zero value runs one server with file
// storage in a temporary directory and the default fsync interval.
type Options struct {
	// SyncAlways makes the servers fsync every write (`sync_interval:
	// always`), as DurabilitySync needs.
	SyncAlways bool
	// StoreDir is the JetStream directory (a sub-directory per server in a
	// cluster). Empty means a new t.TempDir().
	StoreDir string
}

// Server is one embedded server.
type Server struct {
	*server.Server
	opts *server.Options
	port int
}

// URL is the server's client URL.
func (s *Server) URL() string { return s.ClientURL() }

// RunServer starts one server and waits until it accepts connections.
func RunServer(t testing.TB, o Options) *Server {
	t.Helper()
	dir := o.StoreDir
	if dir == "" {
		dir = t.TempDir()
	}
	opts := &server.Options{
		ServerName: "n1",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   dir,
		SyncAlways: o.SyncAlways,
		NoLog:      true,
		NoSigs:     true,
	}
	return start(t, opts)
}

// Restart shuts s down (unless it is down already) and starts a server
// with the same options, port and store directory: what survives is what
// the store kept.
func (s *Server) Restart(t testing.TB) *Server {
	t.Helper()
	s.Shutdown()
	s.WaitForShutdown()
	opts := *s.opts
	opts.Port = s.port
	return start(t, &opts)
}

func start(t testing.TB, opts *server.Options) *Server {
	t.Helper()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("natstest: new server: %v", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatalf("natstest: server %s not ready within 10s", opts.ServerName)
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return &Server{Server: s, opts: opts, port: s.Addr().(*net.TCPAddr).Port}
}

// Cluster is a set of embedded servers forming one JetStream cluster.
type Cluster struct {
	Servers []*Server
}

// URLs is the client URLs of every server, comma-separated, as nats.Connect
// takes them.
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		urls[i] = s.URL()
	}
	return strings.Join(urls, ",")
}

// RunCluster starts n servers routed to each other and waits until their
// JetStream meta group has a leader that knows every server as a peer and
// every server is current (or ctx ends).
func RunCluster(ctx context.Context, t testing.TB, n int, o Options) *Cluster {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ports[i] = freePort(t)
	}
	routes := make([]string, n)
	for i, p := range ports {
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", p)
	}
	c := &Cluster{}
	for i := range n {
		dir := o.StoreDir
		if dir == "" {
			dir = t.TempDir()
		} else {
			dir = fmt.Sprintf("%s/n%d", dir, i+1)
		}
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       server.RANDOM_PORT,
			JetStream:  true,
			StoreDir:   dir,
			SyncAlways: o.SyncAlways,
			NoLog:      true,
			NoSigs:     true,
			Cluster:    server.ClusterOpts{Name: "agcore-test", Host: "127.0.0.1", Port: ports[i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		}
		c.Servers = append(c.Servers, start(t, opts))
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, s := range c.Servers {
			if s.JetStreamIsLeader() && len(s.JetStreamClusterPeers()) == n && c.current() {
				return c
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("natstest: no JetStream meta leader among %d servers: %v", n, ctx.Err())
		case <-tick.C:
		}
	}
}

// current reports whether every server is current with the meta group.
func (c *Cluster) current() bool {
	for _, s := range c.Servers {
		if !s.JetStreamIsCurrent() {
			return false
		}
	}
	return true
}

// StreamLeader returns the server that leads the stream (of the global
// account), or nil while there is none.
func (c *Cluster) StreamLeader(stream string) *Server {
	for _, s := range c.Servers {
		if s.Running() && s.JetStreamIsStreamLeader(server.DEFAULT_GLOBAL_ACCOUNT, stream) {
			return s
		}
	}
	return nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("natstest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Connect connects to url and closes the connection with t.Cleanup.
func Connect(t testing.TB, url string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("natstest: connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}
