package mockllm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// ErrNonLoopback is returned by Start for an address that is not a
// loopback one, unless Config.AllowNonLoopback is set.
var ErrNonLoopback = errors.New("mockllm: refusing to listen on a non-loopback address")

// Server is a running mock server.
type Server struct {
	srv     *http.Server
	ln      net.Listener
	timeout time.Duration
	served  chan error
	closing chan struct{} // closed when Close starts

	mu    sync.Mutex
	fresh map[net.Conn]struct{} // connections that have not sent a request yet

	once     sync.Once
	closeErr error
}

// Start listens on addr (such as "127.0.0.1:0", which picks a free port)
// and serves NewHandler(cfg) until Close is called or ctx is done. It
// refuses addresses that are not loopback ones (an empty host means every
// interface) with ErrNonLoopback unless cfg.AllowNonLoopback is set, and
// refuses a nil cfg.Provider.
func Start(ctx context.Context, addr string, cfg Config) (*Server, error) {
	if cfg.Provider == nil {
		return nil, errors.New("mockllm: Config.Provider is required")
	}
	if !cfg.AllowNonLoopback {
		if err := checkLoopback(addr); err != nil {
			return nil, err
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mockllm: listen %s: %w", addr, err)
	}
	cfg = cfg.withDefaults()
	s := &Server{
		srv: &http.Server{
			Handler:           NewHandler(cfg),
			ReadHeaderTimeout: 10 * time.Second,
		},
		ln:      ln,
		timeout: cfg.ShutdownTimeout,
		served:  make(chan error, 1),
		closing: make(chan struct{}),
		fresh:   make(map[net.Conn]struct{}),
	}
	s.srv.ConnState = s.track
	go func() { s.served <- s.srv.Serve(ln) }()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.closing:
		}
	}()
	cfg.Logger.Debug().Str("url", s.URL()).Msg("mockllm: listening")
	return s, nil
}

// track records which connections have not sent a request yet.
func (s *Server) track(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state == http.StateNew {
		s.fresh[c] = struct{}{}
	} else {
		delete(s.fresh, c)
	}
}

// closeFresh closes the connections that have not sent a request yet.
func (s *Server) closeFresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.fresh {
		_ = c.Close()
		delete(s.fresh, c)
	}
}

// checkLoopback accepts "localhost" and loopback IPs.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("mockllm: address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %q (use 127.0.0.1, or set AllowNonLoopback)", ErrNonLoopback, addr)
}

// Addr returns the address the server listens on, such as "127.0.0.1:41234".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the base URL of the API, including "/v1", such as
// "http://127.0.0.1:41234/v1": what an OpenAI client takes as its base URL.
func (s *Server) URL() string { return "http://" + s.Addr() + "/v1" }

// Close stops the server: it stops accepting connections, waits up to
// Config.ShutdownTimeout for the requests in flight, then cuts those still
// running. It is safe to call more than once; later calls return the first
// result.
func (s *Server) Close() error {
	s.once.Do(func() {
		close(s.closing)
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		defer cancel()
		shut := make(chan error, 1)
		go func() { shut <- s.srv.Shutdown(ctx) }()
		// Shutdown leaves alone, for seconds, connections that a client
		// opened but has not used yet (HTTP clients open spares): close
		// them, as they carry no request.
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var err error
	wait:
		for {
			s.closeFresh()
			select {
			case err = <-shut:
				break wait
			case <-tick.C:
			}
		}
		if err != nil {
			err = errors.Join(fmt.Errorf("mockllm: shutdown: %w", err), s.srv.Close())
		}
		if serr := <-s.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, fmt.Errorf("mockllm: serve: %w", serr))
		}
		s.closeErr = err
	})
	return s.closeErr
}
