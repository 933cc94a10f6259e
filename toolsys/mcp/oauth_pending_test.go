package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/toolsys/mcp"
)

// waitPending waits, on the change notification, until the pending list
// of p satisfies ok, and returns it.
func waitPending(t *testing.T, p *mcp.PendingAuthorizer, ok func([]mcp.PendingAuthorization) bool) []mcp.PendingAuthorization {
	t.Helper()
	for {
		changed := p.Changed()
		if got := p.Pending(); ok(got) {
			return got
		}
		select {
		case <-changed:
		case <-t.Context().Done():
			t.Fatalf("the pending list never reached the state waited for; it is %+v", p.Pending())
		}
	}
}

// followToRedirect does what a browser does with an authorization URL:
// it follows it to the authorization server, stops at the redirect to the
// loopback listener, then requests that URL.
func followToRedirect(t *testing.T, authURL string) {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatalf("authorization URL: %v", err)
	}
	_ = resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "http://127.0.0.1:") {
		t.Fatalf("authorization URL answered %s to %q, want a redirect to the loopback listener", resp.Status, loc)
	}
	back, err := http.Get(loc)
	if err != nil {
		t.Fatalf("redirect to the listener: %v", err)
	}
	_ = back.Body.Close()
	if back.StatusCode != http.StatusOK {
		t.Fatalf("the loopback listener answered %s", back.Status)
	}
}

func pendingConfig(o *oauthServer, dir string, p *mcp.PendingAuthorizer) mcp.ServerConfig {
	return mcp.ServerConfig{Name: "protected", URL: o.URL(), InitTimeout: time.Minute, OAuth: &mcp.OAuthConfig{
		Store: &mcp.FileTokenStore{Dir: dir}, Authorizer: p,
	}}
}

// TestPendingAuthorizer_ListedUntilTheRedirect lists the authorization
// while it waits for the browser, with its server, URL and times, and
// removes it once the browser came back and the connection is up.
func TestPendingAuthorizer_ListedUntilTheRedirect(t *testing.T) {
	o := newOAuthServer(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := &mcp.PendingAuthorizer{Timeout: 5 * time.Minute, Now: func() time.Time { return now }}
	type connected struct {
		c   *mcp.Client
		err error
	}
	done := make(chan connected, 1)
	go func() {
		c, err := mcp.Connect(t.Context(), pendingConfig(o, t.TempDir(), p), mcp.Options{})
		done <- connected{c, err}
	}()

	got := waitPending(t, p, func(l []mcp.PendingAuthorization) bool { return len(l) == 1 })
	a := got[0]
	if a.Server != "protected" || !strings.HasPrefix(a.URL, o.srv.URL+"/authorize?") || !strings.HasPrefix(a.RedirectURL, "http://127.0.0.1:") {
		t.Errorf("pending %+v, want server protected, the authorization URL and the loopback redirect", a)
	}
	if !a.Started.Equal(now) {
		t.Errorf("started %v, want %v", a.Started, now)
	}
	if left := time.Until(a.Expires); left <= 0 || left > 5*time.Minute {
		t.Errorf("expires %v: want within the 5m timeout from now", a.Expires)
	}

	followToRedirect(t, a.URL)
	res := <-done
	if res.err != nil {
		t.Fatalf("Connect: %v", res.err)
	}
	t.Cleanup(func() { _ = res.c.Close() })
	callWhoami(t, res.c)
	if l := p.Pending(); len(l) != 0 {
		t.Errorf("pending after the redirect: %+v, want none", l)
	}
	if _, authz, codes, _ := o.counts(); authz != 1 || codes != 1 {
		t.Errorf("authorizations, code exchanges = %d, %d; want 1, 1", authz, codes)
	}
}

// TestPendingAuthorizer_GoneOnCancel removes the entry when the context
// of the connection ends, and the connection fails with that context's
// error.
func TestPendingAuthorizer_GoneOnCancel(t *testing.T) {
	o := newOAuthServer(t)
	p := &mcp.PendingAuthorizer{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		c, err := mcp.Connect(ctx, pendingConfig(o, t.TempDir(), p), mcp.Options{})
		if c != nil {
			_ = c.Close()
		}
		done <- err
	}()
	got := waitPending(t, p, func(l []mcp.PendingAuthorization) bool { return len(l) == 1 })
	if time.Until(got[0].Expires) > mcp.DefaultAuthorizationTimeout {
		t.Errorf("expires %v: want within the default timeout", got[0].Expires)
	}
	cancel()
	waitPending(t, p, func(l []mcp.PendingAuthorization) bool { return len(l) == 0 })
	if err := <-done; err == nil {
		t.Fatal("Connect succeeded after its context was cancelled")
	}
	if _, _, codes, _ := o.counts(); codes != 0 {
		t.Errorf("code exchanges = %d, want 0", codes)
	}
}

// TestPendingAuthorizer_GoneOnFailure removes the entry when the
// authorization server sends the browser back with a refusal.
func TestPendingAuthorizer_GoneOnFailure(t *testing.T) {
	p := &mcp.PendingAuthorizer{}
	redirect, err := p.RedirectURL(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Authorize(t.Context(), mcp.AuthorizationRequest{Server: "s", URL: "https://as.example/authorize?state=st1", RedirectURL: redirect})
		done <- err
	}()
	waitPending(t, p, func(l []mcp.PendingAuthorization) bool { return len(l) == 1 })
	resp, err := http.Get(redirect + "?state=st1&error=access_denied")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("Authorize: %v, want the refusal", err)
	}
	if l := p.Pending(); len(l) != 0 {
		t.Errorf("pending after a refusal: %+v, want none", l)
	}
}

// TestPendingAuthorizer_OnePerServer keeps one entry per server: a second
// authorization of the same server replaces the first, and the end of the
// first does not remove the second.
func TestPendingAuthorizer_OnePerServer(t *testing.T) {
	p := &mcp.PendingAuthorizer{}
	start := func(state string) (context.CancelFunc, chan error) {
		redirect, err := p.RedirectURL(t.Context(), "s")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := p.Authorize(ctx, mcp.AuthorizationRequest{Server: "s", URL: "https://as.example/authorize?state=" + state, RedirectURL: redirect})
			done <- err
		}()
		return cancel, done
	}
	cancel1, done1 := start("one")
	waitPending(t, p, func(l []mcp.PendingAuthorization) bool { return len(l) == 1 && strings.HasSuffix(l[0].URL, "one") })
	cancel2, done2 := start("two")
	defer cancel2()
	waitPending(t, p, func(l []mcp.PendingAuthorization) bool { return len(l) == 1 && strings.HasSuffix(l[0].URL, "two") })
	cancel1()
	if err := <-done1; !errors.Is(err, context.Canceled) {
		t.Errorf("first Authorize: %v, want context.Canceled", err)
	}
	if l := p.Pending(); len(l) != 1 || !strings.HasSuffix(l[0].URL, "two") {
		t.Errorf("pending after the first ended: %+v, want the second only", l)
	}
	cancel2()
	<-done2
	waitPending(t, p, func(l []mcp.PendingAuthorization) bool { return len(l) == 0 })
}
