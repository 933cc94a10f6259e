package cluster

// This file holds the Member: one process's place in the cluster, its
// membership (protoactor's automanaged provider on a loopback or static
// address, or a NATS key-value bucket), its identity lookup (disthash)
// and its logger.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/automanaged"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/labstack/echo"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/actors/internal/registry"
	"github.com/agcore/agcore/internal/logging"
)

// Config configures a Member. Seeds or Membership is required; a member
// that hosts sessions also needs Runtime and Port, and HealthPort with
// Seeds.
type Config struct {
	// Runtime runs the sessions this member hosts. Its journal must be
	// one every member shares (memory/jetstream), so that a session can
	// resume on another member and its copies are fenced. Nil makes a
	// client: it reaches sessions and hosts none.
	Runtime *actors.Runtime
	// Name is the cluster's name; members of other clusters are ignored.
	// Empty means "agcore".
	Name string
	// Host is the address the member listens on and announces to the
	// others, so it must be one they can reach (not 0.0.0.0). Empty means
	// 127.0.0.1.
	Host string
	// Port is the port of the member's remote endpoint (the actor
	// messages). Zero picks a free port, which suits a client only:
	// members announce theirs through HealthPort.
	Port int
	// HealthPort is the port of the member's membership endpoint
	// (GET /_health), which the other members poll. Required for a
	// member with Seeds; unused by a client and with Membership.
	HealthPort int
	// Seeds are the membership endpoints (host:port) of every member,
	// this one included. Required unless Membership is set, and empty
	// when it is.
	Seeds []string
	// Membership, when set, makes the members find each other through a
	// NATS key-value bucket instead of Seeds. Nil means Seeds.
	Membership *NATSMembership
	// Refresh is how often the membership endpoints are polled (Seeds),
	// or how often a member refreshes its key (Membership), which bounds
	// how soon a dead member is noticed. Zero means 500 ms.
	Refresh time.Duration
	// Attempt bounds each attempt of a request to a grain, which the
	// request loop retries for idempotent requests. Zero means 1 s; it
	// must stay under protoactor's own 5 s.
	Attempt time.Duration
	// IdleTimeout is how long a grain lives without a request before it
	// passivates. Zero means 10 minutes.
	IdleTimeout time.Duration
	// HTTPAddress is the base URL of the member's HTTP API
	// (http://host:port), which it announces to the other members so that
	// they can forward a session's HTTP requests to the session's owner
	// (HTTPAddress, Owner). Empty means the member serves no HTTP API.
	HTTPAddress string
	// Logger receives the member's logs and protoactor's. The zero Logger
	// discards them.
	Logger zerolog.Logger
}

// Defaults.
const (
	DefaultName        = "agcore"
	DefaultHost        = "127.0.0.1"
	DefaultRefresh     = 500 * time.Millisecond
	DefaultAttempt     = time.Second
	DefaultIdleTimeout = 10 * time.Minute
	// MaxAttempt bounds Config.Attempt: protoactor waits a fixed 5 s on a
	// grain's activation, and an attempt must end before that.
	MaxAttempt = 4 * time.Second
)

// ErrConfig is wrapped by every error Start returns for a Config field.
var ErrConfig = errors.New("cluster: invalid config")

// ErrClosed is returned by a second Shutdown.
var ErrClosed = errors.New("cluster: member shut down")

func configErr(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrConfig, field, fmt.Sprintf(format, args...))
}

// withDefaults returns cfg with its defaults filled in, or an error naming
// the wrong field. The caller's Config is not changed.
func (cfg Config) withDefaults() (Config, error) {
	cfg.Seeds = slices.Clone(cfg.Seeds)
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.Host == "" {
		cfg.Host = DefaultHost
	}
	if cfg.Refresh == 0 {
		cfg.Refresh = DefaultRefresh
	}
	if cfg.Attempt == 0 {
		cfg.Attempt = DefaultAttempt
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	switch {
	case len(cfg.Seeds) == 0 && cfg.Membership == nil:
		return cfg, configErr("Seeds", "no membership endpoint given (host:port of every member), and no Membership")
	case len(cfg.Seeds) > 0 && cfg.Membership != nil:
		return cfg, configErr("Seeds", "given with Membership: members found through a NATS bucket need no seeds")
	case cfg.Refresh < 0:
		return cfg, configErr("Refresh", "negative (%v)", cfg.Refresh)
	case cfg.Attempt < 0 || cfg.Attempt > MaxAttempt:
		return cfg, configErr("Attempt", "%v is outside (0, %v]", cfg.Attempt, MaxAttempt)
	case cfg.IdleTimeout < 0:
		return cfg, configErr("IdleTimeout", "negative (%v)", cfg.IdleTimeout)
	case cfg.Port < 0 || cfg.Port > 65535:
		return cfg, configErr("Port", "%d is not a port", cfg.Port)
	}
	if ip := net.ParseIP(cfg.Host); ip != nil && ip.IsUnspecified() {
		return cfg, configErr("Host", "%s is announced to the other members, who cannot reach it: give this machine's address", cfg.Host)
	}
	for _, s := range cfg.Seeds {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return cfg, configErr("Seeds", "%q is not host:port: %v", s, err)
		}
	}
	if cfg.Membership != nil {
		n, err := cfg.Membership.withDefaults(cfg.Refresh)
		if err != nil {
			return cfg, err
		}
		cfg.Membership = &n
		if cfg.Runtime != nil && cfg.Port == 0 {
			return cfg, configErr("Port", "a member needs the port of its remote endpoint")
		}
		return cfg, nil
	}
	if cfg.Runtime != nil {
		if cfg.Port == 0 {
			return cfg, configErr("Port", "a member needs the port of its remote endpoint")
		}
		if cfg.HealthPort <= 0 || cfg.HealthPort > 65535 {
			return cfg, configErr("HealthPort", "a member needs the port of its membership endpoint, one of Seeds")
		}
		if !slices.Contains(cfg.Seeds, net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.HealthPort))) {
			return cfg, configErr("Seeds", "the member's own endpoint %s is not among them", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.HealthPort)))
		}
	}
	return cfg, nil
}

// Member is one process in the cluster: a member that hosts session grains
// on its runtime, or a client that only reaches them. It is safe for
// concurrent use. Create it with Start and end it with Shutdown.
type Member struct {
	cfg    Config
	logger zerolog.Logger
	wire   *Registry
	cl     *cluster.Cluster
	addr   string     // host:port of the remote endpoint
	health *echo.Echo // nil with Config.Membership
	prov   cluster.ClusterProvider
	sub    *eventSub
	view   *view
	owners *owners

	// ctx ends at Shutdown; the grains' turns and waits derive from it.
	ctx    context.Context
	cancel context.CancelFunc
	closed atomic.Bool
}

// Start joins the cluster: as a member hosting session grains when
// cfg.Runtime is set, as a client otherwise. It fails with an error
// wrapping ErrConfig, naming the field, when cfg is wrong. Joining takes
// about a second (protoactor waits that long in StartMember).
func Start(ctx context.Context, cfg Config) (*Member, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := &Member{cfg: cfg, logger: cfg.Logger, wire: NewMessages(), view: newView(), owners: newOwners()}
	port := cfg.Port
	if port == 0 {
		if port, err = freePort(cfg.Host); err != nil {
			return nil, err
		}
	}
	m.addr = net.JoinHostPort(cfg.Host, strconv.Itoa(port))

	slogger := slog.New(logging.SlogHandler(m.logger.With().Str("component", "protoactor").Logger()))
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slogger }))
	registry.Compact(system)

	var kinds []cluster.ConfigOption
	if cfg.Runtime != nil {
		kinds = append(kinds, cluster.WithKinds(cluster.NewKind(Kind, actor.PropsFromProducer(m.newGrain))))
	}
	if cfg.Membership != nil {
		np := newNATSProvider(cfg)
		if err := np.open(ctx); err != nil {
			np.stop()
			return nil, err
		}
		m.prov = np
	} else if err := m.healthEndpoint(system, port); err != nil {
		return nil, err
	}
	ccfg := cluster.Configure(cfg.Name, m.prov, disthash.New(), remote.Configure(cfg.Host, port), kinds...)
	m.cl = cluster.New(system, ccfg)
	m.sub = m.watchTopology(system)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if cfg.Runtime != nil {
		// The info actor answers Overview from the moment the member is
		// seen; a fresh actor system has no actor of that name.
		_, _ = system.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return &infoActor{m: m} }), infoActorName)
	}
	if err := m.join(cfg.Runtime != nil); err != nil {
		m.cancel()
		m.sub.stop()
		if m.health != nil {
			_ = m.health.Close()
			if m.health.Listener != nil {
				_ = m.health.Listener.Close()
			}
		} else {
			_ = m.prov.Shutdown(false)
		}
		system.Shutdown()
		return nil, err
	}
	m.logger.Info().Str("address", m.addr).Bool("member", cfg.Runtime != nil).Msg("cluster: joined")
	return m, nil
}

// join starts the cluster as a member or a client; protoactor panics when
// its provider fails, which join returns as an error.
func (m *Member) join(member bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if perr, ok := r.(error); ok {
				err = fmt.Errorf("cluster: join %s: %w", m.addr, perr)
				return
			}
			err = fmt.Errorf("cluster: join %s: %v", m.addr, r)
		}
	}()
	if member {
		m.cl.StartMember()
	} else {
		m.cl.StartClient()
	}
	return nil
}

// healthEndpoint sets up the automanaged provider over Config.Seeds and,
// for a member, the membership endpoint the other members poll.
func (m *Member) healthEndpoint(system *actor.ActorSystem, port int) error {
	cfg := m.cfg
	m.health = echo.New()
	m.health.HideBanner, m.health.HidePort = true, true
	if cfg.Runtime != nil {
		l, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.HealthPort)))
		if err != nil {
			return fmt.Errorf("cluster: membership endpoint (HealthPort %d): %w", cfg.HealthPort, err)
		}
		m.health.Listener = l
		kindNames := []string{Kind}
		m.health.GET("/_health", func(c echo.Context) error {
			return c.JSON(http.StatusOK, automanaged.NewNode(cfg.Name, system.ID, cfg.Host, port, cfg.HealthPort, kindNames))
		})
	}
	m.prov = automanaged.NewWithTesting(cfg.Refresh, cfg.HealthPort, m.health, cfg.Seeds...)
	return nil
}

// Address returns the host:port of the member's remote endpoint, which
// replies name as their Member.
func (m *Member) Address() string { return m.addr }

// Members returns the remote addresses of the members this one sees, sorted.
func (m *Member) Members() []string {
	return m.view.list()
}

// Shutdown leaves the cluster: the grains stop (their sessions stay on
// the runtime, which the caller shuts down), the membership endpoint
// closes, and the other members notice within Config.Refresh; with
// Config.Membership, the member's key is deleted and the others notice
// at once. It waits
// for protoactor's graceful leave, about two seconds, or ctx. Calling it
// again returns ErrClosed.
func (m *Member) Shutdown(ctx context.Context) error {
	if !m.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	m.cancel()
	m.sub.stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if m.cfg.Runtime != nil {
			m.cl.Shutdown(true)
			return
		}
		// A client has no gossip, which cluster.Shutdown would use.
		m.cl.ActorSystem.Shutdown()
		_ = m.prov.Shutdown(true)
		m.cl.Remote.Shutdown(true)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cluster: shutdown %s: %w", m.addr, ctx.Err())
	}
}

// freePort returns a TCP port on host that was free a moment ago.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("cluster: pick a port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
