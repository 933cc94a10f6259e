package main

// This file holds `agcore cluster`: running a member of a cluster of
// agcore processes (sessions as grains over a NATS JetStream journal),
// submitting a turn to whichever member owns a session, and showing the
// members, their sessions and the journal's stream leaders.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/actors/cluster"
	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream"
	"github.com/agcore/agcore/toolsys"
)

// clusterOptions are the flags every cluster command shares.
type clusterOptions struct {
	seeds      []string
	name       string
	host       string
	refresh    time.Duration
	wait       time.Duration
	membership membershipFlags
}

// config returns the library configuration of a client of o's cluster;
// ms is the NATS membership with --membership nats.
func (o clusterOptions) config(a *app, ms *cluster.NATSMembership) cluster.Config {
	return cluster.Config{Name: o.name, Host: o.host, Seeds: o.seeds, Membership: ms, Refresh: o.refresh, Logger: clusterLogger(a)}
}

// membershipFlags choose how the members find each other.
type membershipFlags struct {
	kind   string
	bucket string
	ttl    time.Duration
}

// Values of --membership.
const (
	membershipSeeds = "seeds"
	membershipNATS  = "nats"
)

// add adds the membership flags to cmd, as persistent flags when
// persistent is set; prefix starts their help ("with --cluster: ").
func (mf *membershipFlags) add(cmd *cobra.Command, persistent bool, prefix, natsFlag, refreshFlag string) {
	f := cmd.Flags()
	if persistent {
		f = cmd.PersistentFlags()
	}
	f.StringVar(&mf.kind, "membership", membershipSeeds, prefix+"how the members find each other: "+membershipSeeds+
		" (they poll the --seed endpoints) or "+membershipNATS+" (each keeps a key in a key-value bucket on the NATS servers of "+
		natsFlag+", which every member watches; no --seed or --health-port needed)")
	f.StringVar(&mf.bucket, "membership-bucket", cluster.DefaultMembersBucket, prefix+"with --membership nats: the key-value bucket of the member keys; the same on every member")
	f.DurationVar(&mf.ttl, "membership-ttl", 0, prefix+"with --membership nats: how long the key of a member killed without leaving outlives its last refresh "+
		"(default 3 × "+refreshFlag+"); the same on every member")
}

// nats reports whether the members find each other through NATS.
func (mf membershipFlags) nats() bool { return mf.kind == membershipNATS }

// check refuses membership flags that cannot work with the seeds given,
// naming the flag; natsFlag is the flag that names the NATS servers.
func (mf membershipFlags) check(seeds []string, natsURL, natsFlag string) error {
	switch mf.kind {
	case membershipSeeds:
		if mf.ttl != 0 {
			return &usageError{errors.New("--membership-ttl needs --membership nats")}
		}
	case membershipNATS:
		if len(seeds) > 0 {
			return &usageError{errors.New("--seed is not used with --membership nats: the members find each other in the NATS bucket")}
		}
		if natsURL == "" {
			return &usageError{fmt.Errorf("%s is required with --membership nats: the NATS servers of the membership bucket", natsFlag)}
		}
		if mf.ttl < 0 {
			return &usageError{fmt.Errorf("--membership-ttl must not be negative, got %v", mf.ttl)}
		}
	default:
		return &usageError{fmt.Errorf("--membership %q: want %s or %s", mf.kind, membershipSeeds, membershipNATS)}
	}
	return nil
}

// config returns the NATS membership on nc, or nil for seeds.
func (mf membershipFlags) config(nc *nats.Conn) (*cluster.NATSMembership, error) {
	if !mf.nats() {
		return nil, nil
	}
	js, err := njs.New(nc)
	if err != nil {
		return nil, fmt.Errorf("membership bucket %s: %w", mf.bucket, err)
	}
	return &cluster.NATSMembership{JetStream: js, Bucket: mf.bucket, TTL: mf.ttl}, nil
}

// where says where the members find each other, for the line a member
// prints when it joins.
func (mf membershipFlags) where(host string, healthPort int) string {
	if mf.nats() {
		return "bucket " + mf.bucket + " on NATS"
	}
	return net.JoinHostPort(host, strconv.Itoa(healthPort))
}

// clusterLogger is the logger of the cluster machinery: protoactor
// reports every unreachable member as an error, so at the default level
// (info) only fatal problems show; --log-level debug shows everything.
func clusterLogger(a *app) zerolog.Logger {
	l := component(a.log, "cluster")
	if l.GetLevel() == zerolog.InfoLevel {
		l = l.Level(zerolog.FatalLevel)
	}
	return l
}

// newClusterCmd returns `agcore cluster`.
func newClusterCmd(a *app) *cobra.Command {
	var o clusterOptions
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Run sessions on several agcore processes over a NATS JetStream journal",
		Long: `Run agcore as a cluster: several member processes share the sessions of one
journal kept in NATS JetStream (docs/cluster.md). Each session runs on one
member, chosen by hashing its id over the members; when a member dies, its
sessions resume on another member, and a copy left on a member that was
paused is fenced by the journal. Membership is a fixed list of seeds: the
membership endpoints (host:port) of every member, which poll each other;
or, with --membership nats, a key-value bucket on the NATS servers that
every member keeps a key in and watches, so that NATS is the only
infrastructure and no member needs to know the others beforehand.

The members' ports carry no authentication or encryption: anyone who can
reach them can run turns, and tools, in any session. Keep them on a private
network (docs/security.md).`,
		Example: `  agcore --config agcore.yaml cluster member --nats nats://n1:4222,nats://n2:4222,nats://n3:4222 \
      --member-addr 10.0.0.1:7001 --health-port 7101 --node m1 \
      --seed 10.0.0.1:7101 --seed 10.0.0.2:7101 --seed 10.0.0.3:7101
  agcore cluster submit s-42 "Summarise the project" --seed 10.0.0.1:7101 --seed 10.0.0.2:7101
  agcore cluster status --seed 10.0.0.1:7101 --seed 10.0.0.2:7101 --nats nats://n1:4222
  agcore --config agcore.yaml cluster member --membership nats --nats nats://n1:4222,nats://n2:4222 \
      --member-addr 10.0.0.4:7001 --node m4
  agcore cluster submit s-42 "Summarise the project" --membership nats --nats nats://n1:4222`,
		Args: unknownCommand,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	pf := cmd.PersistentFlags()
	pf.StringArrayVar(&o.seeds, "seed", nil, "membership endpoint (host:port) of a member; repeat for every member (required unless --membership nats)")
	pf.StringVar(&o.name, "cluster-name", cluster.DefaultName, "name of the cluster; members of other clusters are ignored")
	pf.StringVar(&o.host, "host", cluster.DefaultHost, "address this process listens on for the members' answers (submit, status)")
	pf.DurationVar(&o.refresh, "refresh", cluster.DefaultRefresh, "how often the members' membership endpoints are polled (with --membership nats: how often a member refreshes its key)")
	o.membership.add(cmd, true, "", "--nats", "--refresh")
	pf.DurationVar(&o.wait, "wait", 10*time.Second, "how long to wait for the members to be seen (submit, status)")
	cmd.AddCommand(newClusterMemberCmd(a, &o), newClusterSubmitCmd(a, &o), newClusterStatusCmd(a, &o))
	return cmd
}

// check refuses flags that cannot work, naming the flag; natsURL is the
// command's --nats.
func (o *clusterOptions) check(natsURL string) error {
	if err := o.membership.check(o.seeds, natsURL, "--nats"); err != nil {
		return err
	}
	if o.refresh <= 0 {
		return &usageError{fmt.Errorf("--refresh must be positive, got %v", o.refresh)}
	}
	if o.membership.nats() {
		return nil
	}
	if len(o.seeds) == 0 {
		return &usageError{errors.New("--seed is required: the membership endpoint (host:port) of every member")}
	}
	for _, s := range o.seeds {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return &usageError{fmt.Errorf("--seed %q: %w", s, err)}
		}
	}
	if o.refresh <= 0 {
		return &usageError{fmt.Errorf("--refresh must be positive, got %v", o.refresh)}
	}
	return nil
}

// joinClient starts a client of the cluster and waits until it sees a
// member; natsURL is the command's --nats. leave shuts the client down.
func (o *clusterOptions) joinClient(ctx context.Context, a *app, natsURL string) (m *cluster.Member, leave func(), err error) {
	if err := o.check(natsURL); err != nil {
		return nil, nil, err
	}
	closeNATS := func() {}
	var ms *cluster.NATSMembership
	where := strings.Join(o.seeds, ", ")
	if o.membership.nats() {
		nc, err := nats.Connect(natsURL, nats.Name("agcore cluster client"))
		if err != nil {
			return nil, nil, fmt.Errorf("--nats %s: %w", a.redactor.String(natsURL), err)
		}
		closeNATS = nc.Close
		if ms, err = o.membership.config(nc); err != nil {
			nc.Close()
			return nil, nil, err
		}
		where = "bucket " + o.membership.bucket
	}
	if m, err = cluster.Start(ctx, o.config(a, ms)); err != nil {
		closeNATS()
		return nil, nil, err
	}
	leave = func() {
		_ = m.Shutdown(context.WithoutCancel(ctx))
		closeNATS()
	}
	wctx, cancel := context.WithTimeout(ctx, o.wait)
	defer cancel()
	if err := m.WaitMembers(wctx, 1); err != nil {
		leave()
		return nil, nil, fmt.Errorf("no member seen at %s within --wait %v: %w", where, o.wait, err)
	}
	return m, leave, nil
}

// memberOptions are the flags of `agcore cluster member`.
type memberOptions struct {
	natsURL    string
	memberAddr string
	healthPort int
	node       string
	streams    int
}

func newClusterMemberCmd(a *app, o *clusterOptions) *cobra.Command {
	var mo memberOptions
	cmd := &cobra.Command{
		Use:   "member",
		Short: "Run a member: host sessions of the cluster until SIGINT or SIGTERM",
		Long: `Run a member of the cluster. The member builds its runtime from the
configuration file (--config) as agcore run does (providers, agents, limits,
permissions, tools, MCP servers, workspace), but journals its sessions in
NATS JetStream (--nats) instead of the data directory, and keeps each
session's key-value memory there too. It serves the actor messages on
--member-addr and its membership endpoint (GET /_health) on --health-port of
the same host, which must be among the --seed endpoints; with --membership
nats it keeps its key in the bucket on the --nats servers instead, and
needs neither.

Tool calls that the permission mode does not let run by themselves are
refused: a member has no one to ask. The mode is permissions.mode of the
configuration file, else ask (tools that only read run; the others are
refused). The knowledge base is not available on
a member (its pages live in one data directory).

--streams is the number of streams the sessions are hashed over; it is
fixed for the life of the journal and must be the same on every member.
On SIGINT or SIGTERM the member leaves the cluster, lets its running turns
finish for a bounded time, and stops.`,
		Example: `  agcore --config agcore.yaml cluster member --nats nats://127.0.0.1:4222 \
      --member-addr 127.0.0.1:7001 --health-port 7101 --node m1 \
      --seed 127.0.0.1:7101 --seed 127.0.0.1:7102
  agcore --config agcore.yaml cluster member --membership nats --nats nats://127.0.0.1:4222 \
      --member-addr 127.0.0.1:7001 --node m1`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runClusterMember(cmd, a, o, mo) },
	}
	f := cmd.Flags()
	f.StringVar(&mo.natsURL, "nats", "", "NATS servers of the journal, comma-separated URLs (required)")
	f.StringVar(&mo.memberAddr, "member-addr", "", "host:port of this member's actor endpoint, reachable by the other members (required)")
	f.IntVar(&mo.healthPort, "health-port", 0, "port of this member's membership endpoint on the host of --member-addr; one of the --seed endpoints (required unless --membership nats)")
	f.StringVar(&mo.node, "node", "", "name of this member in the journal's activations (default: --member-addr)")
	f.IntVar(&mo.streams, "streams", 1, "streams the sessions are hashed over; the same on every member, fixed for the life of the journal")
	return cmd
}

func runClusterMember(cmd *cobra.Command, a *app, o *clusterOptions, mo memberOptions) error {
	ctx := cmd.Context()
	if mo.natsURL == "" {
		return &usageError{errors.New("--nats is required: the URLs of the NATS servers that keep the journal")}
	}
	if err := o.check(mo.natsURL); err != nil {
		return err
	}
	host, portText, err := net.SplitHostPort(mo.memberAddr)
	if err != nil {
		return &usageError{fmt.Errorf("--member-addr %q: %w", mo.memberAddr, err)}
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 || port > 65535 {
		return &usageError{fmt.Errorf("--member-addr %q: the port must be a number from 1 to 65535", mo.memberAddr)}
	}
	if o.membership.nats() && mo.healthPort != 0 {
		return &usageError{errors.New("--health-port is not used with --membership nats: the member keeps its key in the NATS bucket")}
	}
	if !o.membership.nats() && (mo.healthPort <= 0 || mo.healthPort > 65535) {
		return &usageError{fmt.Errorf("--health-port is required: a port from 1 to 65535, got %d", mo.healthPort)}
	}
	if mo.streams <= 0 {
		return &usageError{fmt.Errorf("--streams must be positive, got %d", mo.streams)}
	}
	node := mo.node
	if node == "" {
		node = mo.memberAddr
	}
	cfg, err := a.loadConfig(config.Overrides{})
	if err != nil {
		return err
	}
	if cfg.Permissions.Mode == "" {
		// No one can approve a call on a member: the calls that would
		// need approval are refused.
		cfg.Permissions.Mode = toolsys.ModeAsk.String()
	}
	built, err := config.Build(ctx, cfg, config.BuildOptions{Getenv: a.getenv, Logger: runtimeLogger(a.log), Redactor: a.redactor})
	if err != nil {
		return err
	}
	defer func() { _ = built.Close() }()
	if built.Runtime.Store != nil {
		return &usageError{errors.New("the configuration enables the knowledge base, which a cluster member cannot use " +
			"(its pages live in one data directory): disable knowledge")}
	}
	nc, err := nats.Connect(mo.natsURL, nats.Name("agcore member "+node), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("--nats %s: %w", a.redactor.String(mo.natsURL), err)
	}
	defer nc.Close()
	// The configuration's durability maps to the streams (docs/cluster.md).
	j, err := jetstream.New(ctx, jetstream.Config{Conn: nc, Streams: mo.streams,
		Options: memory.JournalOptions{Durability: built.Runtime.Durability, Logger: runtimeLogger(a.log), Redactor: a.redactor}})
	if err != nil {
		return fmt.Errorf("journal on %s: %w", a.redactor.String(mo.natsURL), err)
	}
	sm, err := jetstream.NewSessionMemory(ctx, jetstream.SessionMemoryConfig{Conn: nc})
	if err != nil {
		return fmt.Errorf("session memory on %s: %w", a.redactor.String(mo.natsURL), err)
	}
	rc := built.Runtime
	rc.DataDir, rc.Journal, rc.SessionMemory, rc.Node = "", j, sm, node
	rt, err := actors.New(rc)
	if err != nil {
		return err
	}
	stopRuntime := func() error {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		return rt.Shutdown(sctx)
	}
	ms, err := o.membership.config(nc)
	if err != nil {
		return errors.Join(err, stopRuntime())
	}
	m, err := cluster.Start(ctx, cluster.Config{
		Runtime: rt, Name: o.name, Host: host, Port: port, HealthPort: mo.healthPort, Seeds: o.seeds, Membership: ms,
		Refresh: o.refresh, Logger: clusterLogger(a),
	})
	if err != nil {
		return errors.Join(err, stopRuntime())
	}
	fmt.Fprintf(cmd.OutOrStdout(), "member %s (%s) joined cluster %s; membership on %s\n", m.Address(), node, o.name,
		o.membership.where(host, mo.healthPort))
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	return errors.Join(m.Shutdown(sctx), stopRuntime())
}

func newClusterSubmitCmd(a *app, o *clusterOptions) *cobra.Command {
	var turnID, natsURL string
	var jsonOut bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "submit SESSION TEXT",
		Short: "Run a turn in a session, on whichever member owns it, and print its answer",
		Long: `Send TEXT as a turn of SESSION to the member that owns the session, wait for
the turn's end, and print its final text (with --json, the member's whole
reply). The turn carries a turn id (--turn-id, or a fresh one): the request
is sent again with it after an attempt without an answer (a member died and
the session moves), and the session never runs one turn id twice, so
submitting the same --turn-id again reports how that turn ended.`,
		Example: `  agcore cluster submit s-42 "Summarise the project" --seed 127.0.0.1:7101
  agcore cluster submit s-42 "Summarise the project" --turn-id t-1 --json --seed 127.0.0.1:7101`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if turnID == "" {
				var b [8]byte
				_, _ = rand.Read(b[:])
				turnID = hex.EncodeToString(b[:])
			}
			if timeout <= 0 {
				return &usageError{fmt.Errorf("--timeout must be positive, got %v", timeout)}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			m, leave, err := o.joinClient(ctx, a, natsURL)
			if err != nil {
				return err
			}
			defer leave()
			reply, err := m.Submit(ctx, args[0], turnID, args[1])
			if jsonOut && reply != nil {
				if err := json.NewEncoder(cmd.OutOrStdout()).Encode(reply); err != nil {
					return err
				}
			} else if reply != nil && reply.Result != nil {
				fmt.Fprintln(cmd.OutOrStdout(), a.redactor.String(reply.Result.Text))
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&turnID, "turn-id", "", "the turn's id, which makes resubmitting it safe (default: a fresh one)")
	f.BoolVar(&jsonOut, "json", false, "print the member's reply as JSON")
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait for the turn's end")
	f.StringVar(&natsURL, "nats", "", "with --membership nats: NATS servers of the membership bucket, comma-separated URLs")
	return cmd
}

func newClusterStatusCmd(a *app, o *clusterOptions) *cobra.Command {
	var natsURL, stream string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the members, the sessions active on each, and the journal's stream leaders",
		Long: `Show the members this process sees through the --seed endpoints (or the
membership bucket with --membership nats), each with the
sessions active on its runtime (those it hosts, and copies a move left
behind until they are fenced or passivate), and, with --nats, the journal's
streams with the NATS server that leads each and the others that hold it.
Nothing is created or activated.`,
		Example: `  agcore cluster status --seed 127.0.0.1:7101 --seed 127.0.0.1:7102
  agcore cluster status --seed 127.0.0.1:7101 --nats nats://127.0.0.1:4222 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			m, leave, err := o.joinClient(ctx, a, natsURL)
			if err != nil {
				return err
			}
			defer leave()
			st := clusterStatus{}
			if st.Members, err = m.Overview(ctx); err != nil {
				return err
			}
			if natsURL != "" {
				nc, err := nats.Connect(natsURL, nats.Name("agcore cluster status"))
				if err != nil {
					return fmt.Errorf("--nats %s: %w", a.redactor.String(natsURL), err)
				}
				defer nc.Close()
				if st.Streams, err = jetstream.Leaders(ctx, nc, stream); err != nil {
					return err
				}
			}
			if jsonOut {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(st)
			}
			return st.print(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&natsURL, "nats", "", "NATS servers of the journal, to show its stream leaders (and of the membership bucket with --membership nats)")
	f.StringVar(&stream, "stream", jetstream.DefaultStream, "name prefix of the journal's streams")
	f.BoolVar(&jsonOut, "json", false, "print one JSON object")
	return cmd
}

// clusterStatus is what `agcore cluster status` shows.
type clusterStatus struct {
	Members []cluster.MemberInfo     `json:"members"`
	Streams []jetstream.StreamLeader `json:"streams,omitempty"`
}

func (st clusterStatus) print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tSESSIONS\tIDS")
	for _, m := range st.Members {
		if m.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t(no answer: %s)\n", m.Address, m.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", m.Address, len(m.Sessions), strings.Join(m.Sessions, " "))
	}
	if st.Streams != nil {
		fmt.Fprintln(tw, "\nSTREAM\tLEADER\tREPLICAS\tRECORDS")
		for _, s := range st.Streams {
			leader := s.Leader
			if leader == "" {
				leader = "(none)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", s.Stream, leader, strings.Join(s.Replicas, ","), s.Messages)
		}
	}
	return tw.Flush()
}
