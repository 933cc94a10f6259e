package main

// This file holds `agcore serve --cluster`: the server joins a cluster of
// agcore processes as a member whose sessions are journaled in NATS
// JetStream, and routes each request naming a session to the member that
// owns the session (serve_cluster_router.go).

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"golang.org/x/net/netutil"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/actors/cluster"
	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream"
)

// serveClusterOptions are the flags of serve that make it a cluster
// member. The zero value serves alone.
type serveClusterOptions struct {
	natsURL    string
	memberAddr string
	healthPort int
	seeds      []string
	node       string
	streams    int
	name       string
	refresh    time.Duration
	membership membershipFlags
	// nc is the connection of the journal, which the NATS membership
	// uses too; set by useJournal.
	nc *nats.Conn
}

// serveClusterFlags are the flags that only mean something with --cluster.
var serveClusterFlags = []string{"member-addr", "health-port", "seed", "node", "streams", "cluster-name", "cluster-refresh",
	"membership", "membership-bucket", "membership-ttl"}

// addServeClusterFlags adds the cluster flags to serve.
func addServeClusterFlags(cmd *cobra.Command, o *serveClusterOptions) {
	f := cmd.Flags()
	f.StringVar(&o.natsURL, "cluster", "", "join a cluster: NATS servers of the shared journal, comma-separated URLs (see docs/cluster.md)")
	f.StringVar(&o.memberAddr, "member-addr", "", "with --cluster: host:port of this member's actor endpoint, reachable by the other members (required)")
	f.IntVar(&o.healthPort, "health-port", 0, "with --cluster: port of this member's membership endpoint on the host of --member-addr; one of the --seed endpoints (required)")
	f.StringArrayVar(&o.seeds, "seed", nil, "with --cluster: membership endpoint (host:port) of a member; repeat for every member (required)")
	f.StringVar(&o.node, "node", "", "with --cluster: name of this member in the journal's activations (default: --member-addr)")
	f.IntVar(&o.streams, "streams", 1, "with --cluster: streams the sessions are hashed over; the same on every member, fixed for the life of the journal")
	f.StringVar(&o.name, "cluster-name", cluster.DefaultName, "with --cluster: name of the cluster; members of other clusters are ignored")
	f.DurationVar(&o.refresh, "cluster-refresh", cluster.DefaultRefresh, "with --cluster: how often the members' membership endpoints are polled (with --membership nats: how often the member refreshes its key)")
	o.membership.add(cmd, false, "with --cluster: ", "--cluster", "--cluster-refresh")
}

func (o *serveClusterOptions) enabled() bool { return o.natsURL != "" }

// check refuses cluster flags that cannot work, naming the flag.
func (o *serveClusterOptions) check(cmd *cobra.Command) error {
	if !o.enabled() {
		for _, name := range serveClusterFlags {
			if cmd.Flags().Changed(name) {
				return &usageError{fmt.Errorf("--%s needs --cluster (the NATS servers of the cluster's journal)", name)}
			}
		}
		return nil
	}
	if _, _, err := o.hostPort(); err != nil {
		return err
	}
	if err := o.membership.check(o.seeds, o.natsURL, "--cluster"); err != nil {
		return err
	}
	if o.membership.nats() {
		if o.healthPort != 0 {
			return &usageError{errors.New("--health-port is not used with --membership nats: the member keeps its key in the NATS bucket")}
		}
		return o.checkCommon()
	}
	if o.healthPort <= 0 || o.healthPort > 65535 {
		return &usageError{fmt.Errorf("--health-port is required with --cluster: a port from 1 to 65535, got %d", o.healthPort)}
	}
	if len(o.seeds) == 0 {
		return &usageError{errors.New("--seed is required with --cluster: the membership endpoint (host:port) of every member")}
	}
	for _, s := range o.seeds {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return &usageError{fmt.Errorf("--seed %q: %w", s, err)}
		}
	}
	return o.checkCommon()
}

// checkCommon refuses the flags of either membership that cannot work.
func (o *serveClusterOptions) checkCommon() error {
	if o.streams <= 0 {
		return &usageError{fmt.Errorf("--streams must be positive, got %d", o.streams)}
	}
	if o.refresh <= 0 {
		return &usageError{fmt.Errorf("--cluster-refresh must be positive, got %v", o.refresh)}
	}
	return nil
}

// hostPort splits --member-addr.
func (o *serveClusterOptions) hostPort() (string, int, error) {
	host, portText, err := net.SplitHostPort(o.memberAddr)
	if err != nil {
		return "", 0, &usageError{fmt.Errorf("--member-addr %q is required with --cluster, as host:port: %w", o.memberAddr, err)}
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, &usageError{fmt.Errorf("--member-addr %q: the port must be a number from 1 to 65535", o.memberAddr)}
	}
	return host, port, nil
}

// useJournal points rc at the cluster's journal and session memory on
// NATS, in place of the data directory, and returns what closes them.
func (o *serveClusterOptions) useJournal(ctx context.Context, a *app, rc *actors.Config) (closeFn func(), err error) {
	if rc.Store != nil {
		return nil, &usageError{errors.New("the configuration enables the knowledge base, which a cluster member cannot use " +
			"(its pages live in one data directory): disable knowledge")}
	}
	node := o.node
	if node == "" {
		node = o.memberAddr
	}
	nc, err := nats.Connect(o.natsURL, nats.Name("agcore serve "+node), nats.MaxReconnects(-1))
	if err != nil {
		return nil, fmt.Errorf("--cluster %s: %w", a.redactor.String(o.natsURL), err)
	}
	j, err := jetstream.New(ctx, jetstream.Config{Conn: nc, Streams: o.streams,
		Options: memory.JournalOptions{Durability: rc.Durability, Logger: runtimeLogger(a.log), Redactor: a.redactor}})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("journal on %s: %w", a.redactor.String(o.natsURL), err)
	}
	sm, err := jetstream.NewSessionMemory(ctx, jetstream.SessionMemoryConfig{Conn: nc})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("session memory on %s: %w", a.redactor.String(o.natsURL), err)
	}
	rc.DataDir, rc.Journal, rc.SessionMemory, rc.Node = "", j, sm, node
	o.nc = nc
	return nc.Close, nil
}

// clusterServer serves the API of a cluster member: the router in front
// of the API, on a listener of its own.
type clusterServer struct {
	member *cluster.Member
	hs     *http.Server
	max    int
	// joined is the line that tells the user the member joined.
	joined string
}

// joinCluster joins the cluster as a member hosting rt's sessions, which
// announces the HTTP API listening on ln, and returns the server of the
// member's API.
func (o *serveClusterOptions) joinCluster(ctx context.Context, a *app, rt *actors.Runtime, api *httpapi.Server, ln net.Listener,
	so serveOptions) (*clusterServer, error) {
	host, port, err := o.hostPort()
	if err != nil {
		return nil, err
	}
	httpAddr := httpAddress(ln.Addr(), host)
	ms, err := o.membership.config(o.nc)
	if err != nil {
		return nil, err
	}
	m, err := cluster.Start(ctx, cluster.Config{
		Runtime: rt, Name: o.name, Host: host, Port: port, HealthPort: o.healthPort, Seeds: o.seeds, Membership: ms,
		Refresh: o.refresh, HTTPAddress: httpAddr, Logger: clusterLogger(a),
	})
	if err != nil {
		return nil, err
	}
	logger := component(a.log, "serve")
	router := &sessionRouter{
		local: api, owners: m, self: m.Address(),
		maxBody:     cmp.Or(max(so.maxBody, 0), httpapi.DefaultMaxBodyBytes),
		bodyTimeout: cmp.Or(so.bodyTimeout, httpapi.DefaultBodyTimeout),
		newID:       newAPISessionID, log: logger, transport: memberTransport(),
	}
	// As httpapi.Server.Serve: no ReadTimeout or WriteTimeout, which
	// would cut event streams.
	hs := &http.Server{
		Handler:           router,
		ReadHeaderTimeout: cmp.Or(so.readHeaderTimeout, httpapi.DefaultReadHeaderTimeout),
		IdleTimeout:       cmp.Or(so.idleTimeout, httpapi.DefaultIdleTimeout),
		ErrorLog:          log.New(logger.With().Str("source", "net/http").Logger(), "", 0),
	}
	joined := fmt.Sprintf("member %s (%s) joined cluster %s; membership on %s; HTTP API announced as %s", m.Address(),
		cmp.Or(o.node, o.memberAddr), o.name, o.membership.where(host, o.healthPort), httpAddr)
	return &clusterServer{member: m, hs: hs, max: cmp.Or(so.maxConnections, httpapi.DefaultMaxConnections), joined: joined}, nil
}

// serve serves the member's API on ln until leave, when it returns
// httpapi.ErrServerClosed.
func (cs *clusterServer) serve(ln net.Listener) error {
	err := cs.hs.Serve(netutil.LimitListener(ln, cs.max))
	if errors.Is(err, http.ErrServerClosed) {
		return httpapi.ErrServerClosed
	}
	return err
}

// leave leaves the cluster and closes the member's listener, waiting for
// the requests in flight (forwarded event streams included) until ctx
// ends, then cutting them.
func (cs *clusterServer) leave(ctx context.Context) error {
	err := cs.member.Shutdown(ctx)
	if herr := cs.hs.Shutdown(ctx); herr != nil {
		_ = cs.hs.Close()
		if !errors.Is(herr, context.DeadlineExceeded) && !errors.Is(herr, context.Canceled) {
			err = errors.Join(err, herr)
		}
	}
	return err
}

// memberTransport returns the transport of the requests a member forwards
// to another: http.DefaultTransport's settings without its proxy from the
// environment (HTTP_PROXY), so that a forwarded request, and the token it
// carries, goes straight to the member.
func memberTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	return t
}

// httpAddress returns the base URL the member announces for its HTTP API
// listening on addr: addr itself, or, when it listens on every interface
// (0.0.0.0, ::), the host of --member-addr, which the other members reach.
func httpAddress(addr net.Addr, memberHost string) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = memberHost
	}
	return "http://" + net.JoinHostPort(host, port)
}

// newAPISessionID returns a fresh session id, as the API generates them.
func newAPISessionID() string {
	var b [9]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "s-" + hex.EncodeToString(b[:])
}
