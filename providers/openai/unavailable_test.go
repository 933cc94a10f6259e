package openai_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/providers/openai"
)

// invalidHost is under the .invalid top-level domain, which never resolves.
const invalidHost = "agcore-test.invalid"

// closedAddr returns a 127.0.0.1 address on which nothing listens any
// more: a listener is opened and closed at once.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// requireNXDOMAIN skips the test when the machine's resolver does not
// answer "no such host" for host (an offline resolver may time out or
// fail differently); TestTransportFailureKinds covers the classification
// with an injected DNS failure.
func requireNXDOMAIN(t *testing.T, host string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := net.DefaultResolver.LookupHost(ctx, host)
	if de, ok := errors.AsType[*net.DNSError](err); !ok || !de.IsNotFound {
		t.Skipf("the resolver does not answer NXDOMAIN for %s here (got %v); the injected DNS failure is tested instead", host, err)
	}
}

// TestUnreachableEndpoint points the provider, with its own HTTP client and
// the default retry policy (its waits recorded instead of slept), at an
// endpoint where nothing listens and at a host that does not resolve. Both
// are classified unavailable, name the endpoint, are attempted 3 times and
// wait less than 5 s in all.
func TestUnreachableEndpoint(t *testing.T) {
	addr := closedAddr(t)
	tests := []struct {
		name    string
		base    string
		require func(t *testing.T)
		message string
	}{
		{"connection refused", "http://" + addr + "/v1", nil,
			"connection refused: nothing is listening at http://" + addr + "/v1"},
		{"unknown host", "http://" + invalidHost + "/v1", func(t *testing.T) { requireNXDOMAIN(t, invalidHost) },
			`unknown host: "` + invalidHost + `" does not resolve (endpoint http://` + invalidHost + `/v1)`},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name + "/chat"
			if stream {
				name = tt.name + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				if tt.require != nil {
					tt.require(t)
				}
				w := &waits{}
				var logs bytes.Buffer
				p, err := openai.New(openai.Options{BaseURL: tt.base, Model: "m",
					Retry:  &providers.RetryPolicy{Sleep: w.sleep},
					Logger: zerolog.New(&logs).Level(zerolog.DebugLevel)})
				if err != nil {
					t.Fatal(err)
				}
				if stream {
					var st providers.Stream
					if st, err = p.Stream(t.Context(), hello); err == nil {
						st.Close()
						t.Fatal("Stream opened against an unreachable endpoint")
					}
				} else {
					_, err = p.Chat(t.Context(), hello)
				}
				checkError(t, err, providers.KindUnavailable, 0, tt.message)
				if attempts := strings.Count(logs.String(), `"message":"chat completion"`); attempts != providers.DefaultMaxAttempts {
					t.Errorf("attempts = %d, want %d:\n%s", attempts, providers.DefaultMaxAttempts, logs.String())
				}
				var total time.Duration
				for _, d := range w.get() {
					total += d
				}
				if len(w.get()) != providers.DefaultMaxAttempts-1 || total >= 5*time.Second {
					t.Errorf("waits = %v (total %v), want %d waits under 5s in all", w.get(), total, providers.DefaultMaxAttempts-1)
				}
			})
		}
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTransportFailureKinds classifies transport failures injected below
// the HTTP client: failing to connect (refused, no such host, DNS failure,
// no route, dial timeout, an unreachable proxy) is unavailable and names
// the endpoint; a timeout or a reset once connected stays a timeout.
func TestTransportFailureKinds(t *testing.T) {
	const base = "http://model.test:8080/v1"
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	tests := []struct {
		name    string
		err     error
		kind    providers.Kind
		message string
	}{
		{"connection refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), providers.KindUnavailable,
			"connection refused: nothing is listening at " + base},
		{"no such host", dial(&net.DNSError{Err: "no such host", Name: "model.test", IsNotFound: true}), providers.KindUnavailable,
			`unknown host: "model.test" does not resolve (endpoint ` + base + ")"},
		{"DNS timeout", dial(&net.DNSError{Err: "i/o timeout", Name: "model.test", IsTimeout: true}), providers.KindUnavailable,
			`DNS lookup of "model.test" failed (endpoint ` + base + ")"},
		{"no route to host", dial(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), providers.KindUnavailable,
			"no route to host: cannot reach " + base},
		{"network unreachable", dial(os.NewSyscallError("connect", syscall.ENETUNREACH)), providers.KindUnavailable,
			"network unreachable: cannot reach " + base},
		{"dial timeout", dial(os.ErrDeadlineExceeded), providers.KindUnavailable,
			"connect timeout: no connection to " + base},
		{"proxy refused", &net.OpError{Op: "proxyconnect", Net: "tcp", Err: dial(os.NewSyscallError("connect", syscall.ECONNREFUSED))},
			providers.KindUnavailable, "cannot connect to the HTTP proxy (see HTTPS_PROXY, HTTP_PROXY) for " + base},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, providers.KindTimeout, "i/o timeout"},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, providers.KindTimeout, "reset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requests := 0
			hc := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
				requests++
				return nil, tt.err
			})}
			w := &waits{}
			p, err := openai.New(openai.Options{BaseURL: base, Model: "m", HTTPClient: hc,
				Retry: &providers.RetryPolicy{Sleep: w.sleep, Rand: func() float64 { return 0 }}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Chat(t.Context(), hello)
			checkError(t, err, tt.kind, 0, tt.message)
			if !errors.Is(err, tt.err) {
				t.Errorf("err = %v does not wrap the transport error", err)
			}
			if requests != providers.DefaultMaxAttempts {
				t.Errorf("requests = %d, want %d", requests, providers.DefaultMaxAttempts)
			}
			if tt.kind == providers.KindUnavailable {
				for _, d := range w.get() {
					if d != providers.DefaultUnavailableDelay {
						t.Errorf("waits = %v, want %v each", w.get(), providers.DefaultUnavailableDelay)
						break
					}
				}
			}
		})
	}
}
