package mcp_test

import (
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/toolsys/mcp"
)

// TestFileTokenStore_RefusesOpenFiles refuses a token file that other
// users could read, and reports a missing one as ErrNoToken.
func TestFileTokenStore_RefusesOpenFiles(t *testing.T) {
	dir := t.TempDir()
	s := &mcp.FileTokenStore{Dir: dir}
	if _, err := s.Load("srv"); !errors.Is(err, mcp.ErrNoToken) {
		t.Fatalf("Load of nothing: %v, want ErrNoToken", err)
	}
	if err := s.Save("srv", mcp.TokenRecord{ServerURL: "http://127.0.0.1/mcp", Token: tokenFor("tok-abcdef")}); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.Load("srv"); err != nil || rec.Token.AccessToken != "tok-abcdef" {
		t.Fatalf("Load = %+v, %v", rec, err)
	}
	path := filepath.Join(dir, "srv.json")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Load("srv")
	if !errors.Is(err, mcp.ErrTokenFileMode) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Load of a 0644 file: %v, want ErrTokenFileMode naming %s", err, path)
	}
	if _, err := s.Load("../etc"); !errors.Is(err, mcp.ErrInvalidConfig) {
		t.Errorf("Load of a path-like name: %v, want ErrInvalidConfig", err)
	}
}

// TestLoopbackAuthorizer_OnlyItsOwnCallback binds the redirect listener
// to 127.0.0.1 only while Authorize waits, answers a callback with another
// state 400 without ending the wait, and returns the code of the callback
// with the right state.
func TestLoopbackAuthorizer_OnlyItsOwnCallback(t *testing.T) {
	a := &mcp.LoopbackAuthorizer{}
	redirect, err := a.RedirectURL(t.Context(), "srv")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(redirect)
	if u.Hostname() != "127.0.0.1" || u.Path != "/callback" {
		t.Fatalf("redirect URL %q, want http://127.0.0.1:PORT/callback", redirect)
	}
	// Nothing listens before an authorization waits.
	if resp, err := http.Get(redirect + "?code=early&state=s123"); err == nil {
		resp.Body.Close()
		t.Errorf("the redirect listener answers before Authorize")
	}
	a.Open = func(string) error {
		resp, err := http.Get(redirect + "?code=stolen&state=other")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("callback with a foreign state: %s, want 400", resp.Status)
		}
		resp, err = http.Get(redirect + "?code=good&state=s123")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	res, err := a.Authorize(t.Context(), mcp.AuthorizationRequest{Server: "srv", URL: "https://as.example/authorize?state=s123", RedirectURL: redirect})
	if err != nil {
		t.Fatal(err)
	}
	if res.Code != "good" || res.State != "s123" {
		t.Errorf("result %+v, want the code of the callback with the request's state", res)
	}
	// The listener is closed once the authorization is over.
	if resp, err := http.Get(redirect + "?code=late&state=s123"); err == nil {
		resp.Body.Close()
		t.Errorf("the redirect listener still answers after Authorize returned")
	}
}
