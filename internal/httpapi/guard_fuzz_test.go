package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzRequestGuard sends requests with arbitrary Host, Origin,
// Sec-Fetch-Site, preflight and Content-Type headers through the checks
// ServeHTTP makes before any handler runs, for a server on 127.0.0.1:8080
// that allows the host agents.internal and the origin
// https://app.example.com. They must never panic, and a request they let
// through (or a preflight they grant) must name the server in its Host,
// come from the server's own origin or the allowed one, and carry JSON
// when it has a body.
func FuzzRequestGuard(f *testing.F) {
	const allowedOrigin = "https://app.example.com"
	f.Add(uint8(1), "127.0.0.1:8080", "", "", "", "", "application/json", true)
	f.Add(uint8(1), "localhost:8080", "http://localhost:8080", "same-origin", "", "", "application/json; charset=utf-8", true)
	f.Add(uint8(1), "127.0.0.1:8080", "http://evil.example", "cross-site", "", "", "", true)
	f.Add(uint8(1), "127.0.0.1:8080", "null", "", "", "", "text/plain", true)
	f.Add(uint8(1), "evil.example:8080", "http://evil.example:8080", "same-origin", "", "", "application/json", true)
	f.Add(uint8(4), "127.0.0.1:8080", allowedOrigin, "cross-site", "POST", "authorization, content-type", "", false)
	f.Add(uint8(4), "agents.internal", "HTTPS://APP.example.com:443/", "cross-site", "DELETE", "x-evil", "", false)
	f.Add(uint8(0), "[::1]:8080", "http://[::1]:8080", "none", "", "", "", false)
	f.Add(uint8(0), "127.0.0.1:8080", "", "same-site", "", "", "", false)
	f.Add(uint8(1), "agents.internal:1", "http://agents.internal:1", "", "", "", "application/jsonx", true)

	hosts, err := newHostPolicy([]string{"agents.internal"})
	if err != nil {
		f.Fatal(err)
	}
	origins, err := newOriginPolicy([]string{allowedOrigin})
	if err != nil {
		f.Fatal(err)
	}
	s := &Server{hosts: hosts, origins: origins}
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	trusted := func(name string) bool {
		ip := net.ParseIP(name)
		return name == "localhost" || name == "agents.internal" || ip != nil && ip.IsLoopback()
	}

	f.Fuzz(func(t *testing.T, method uint8, host, origin, site, reqMethod, reqHeaders, contentType string, body bool) {
		methods := []string{"GET", "POST", "DELETE", "HEAD", "OPTIONS", "PUT"}
		r := &http.Request{
			Method: methods[int(method)%len(methods)], URL: &url.URL{Path: "/v1/sessions"}, Host: host,
			Header: http.Header{}, Body: http.NoBody,
		}
		if body {
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader([]byte(`{}`))), 2
		}
		for name, v := range map[string]string{"Origin": origin, "Sec-Fetch-Site": site, "Content-Type": contentType,
			"Access-Control-Request-Method": reqMethod, "Access-Control-Request-Headers": reqHeaders} {
			if v != "" {
				r.Header.Set(name, v)
			}
		}
		r = r.WithContext(context.WithValue(context.Background(), http.LocalAddrContextKey, net.Addr(local)))
		w := httptest.NewRecorder()
		passed := s.guard(w, r)
		granted := !passed && w.Code == http.StatusNoContent

		if !passed && !granted {
			if w.Code < 400 || w.Code >= 500 {
				t.Fatalf("refusal with status %d", w.Code)
			}
			var eb ErrorBody
			if err := json.Unmarshal(w.Body.Bytes(), &eb); err != nil || eb.Error == nil || eb.Error.Message == "" {
				t.Fatalf("refusal without an error body: %q", w.Body.String())
			}
			for _, v := range []string{host, origin} {
				if len(v) > 3 && strings.Contains(eb.Error.Message, v) {
					t.Fatalf("the refusal repeats %q: %s", v, eb.Error.Message)
				}
			}
			return
		}
		hu, err := url.Parse("http://" + host)
		if err != nil || !trusted(strings.ToLower(hu.Hostname())) {
			t.Fatalf("Host %q passed (%v)", host, err)
		}
		if acao := w.Header().Get("Access-Control-Allow-Origin"); acao != "" && acao != allowedOrigin {
			t.Fatalf("Access-Control-Allow-Origin %q", acao)
		}
		if granted && w.Header().Get("Access-Control-Allow-Origin") != allowedOrigin {
			t.Fatalf("preflight granted without the allowed origin: %v", w.Header())
		}
		if origin != "" {
			ou, err := url.Parse(origin)
			if err != nil {
				t.Fatalf("Origin %q passed: %v", origin, err)
			}
			scheme, name, port := strings.ToLower(ou.Scheme), strings.ToLower(ou.Hostname()), ou.Port()
			isAllowed := scheme == "https" && name == "app.example.com" && (port == "" || port == "443")
			isSelf := scheme == "http" && name == strings.ToLower(hu.Hostname()) && trusted(name)
			if !isAllowed && !isSelf {
				t.Fatalf("a foreign origin %q passed for Host %q", origin, host)
			}
		}
		switch strings.ToLower(strings.TrimSpace(site)) {
		case "", "same-origin", "none":
		default:
			if w.Header().Get("Access-Control-Allow-Origin") != allowedOrigin {
				t.Fatalf("Sec-Fetch-Site %q passed without the allowed origin", site)
			}
		}
		if passed && body && checkContentType(r) == nil {
			if mt, _, err := mime.ParseMediaType(contentType); err != nil || mt != "application/json" {
				t.Fatalf("a body with Content-Type %q passed", contentType)
			}
		}
	})
}
