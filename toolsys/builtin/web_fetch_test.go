package builtin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/toolsys"
)

func TestWebFetch(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><head><title>T</title><script>alert(1)</script></head>
<body><h1>Hello</h1><p>Read <a href="/docs">the docs</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`))
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("just text\n"))
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"a":1}`))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		_, _ = w.Write([]byte("caf\xe9"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	mux.HandleFunc("/redirect-inside", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/plain", http.StatusFound)
	})
	mux.HandleFunc("/redirect-outside", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://evil.example.com/x", http.StatusFound)
	})
	mux.HandleFunc("/redirect-scheme", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://127.0.0.1/x", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	local := &toolsys.Context{AllowedHosts: []string{"127.0.0.1"}}

	tests := []struct {
		name    string
		opts    Options
		tc      *toolsys.Context
		p       WebFetchParams
		want    string
		wantErr string
		meta    map[string]any
	}{
		{name: "html converted", tc: local, p: WebFetchParams{URL: srv.URL + "/page"},
			want: "Title: T\n\n# Hello\n\nRead the docs (" + srv.URL + "/docs).\n\n- one\n- two",
			meta: map[string]any{"url": srv.URL + "/page", "status": 200, "content_type": "text/html", "bytes": 169, "truncated": false}},
		{name: "plain text as is", tc: local, p: WebFetchParams{URL: srv.URL + "/plain"}, want: "just text\n"},
		{name: "json as is", tc: local, p: WebFetchParams{URL: srv.URL + "/json"}, want: `{"a":1}`},
		{name: "charset decoded", tc: local, p: WebFetchParams{URL: srv.URL + "/latin1"}, want: "café"},
		{name: "size cap from options", opts: Options{FetchMaxBytes: 100}, tc: local, p: WebFetchParams{URL: srv.URL + "/big"},
			want: strings.Repeat("x", 100) + "\n\n[body truncated at 100 bytes]",
			meta: map[string]any{"url": srv.URL + "/big", "status": 200, "content_type": "text/plain", "bytes": 100, "truncated": true}},
		{name: "size cap from call", tc: local, p: WebFetchParams{URL: srv.URL + "/big", MaxBytes: 10},
			want: strings.Repeat("x", 10) + "\n\n[body truncated at 10 bytes]"},
		{name: "call cannot raise the cap", opts: Options{FetchMaxBytes: 20}, tc: local, p: WebFetchParams{URL: srv.URL + "/big", MaxBytes: 1000},
			want: strings.Repeat("x", 20) + "\n\n[body truncated at 20 bytes]"},
		{name: "redirect inside the policy", tc: local, p: WebFetchParams{URL: srv.URL + "/redirect-inside"}, want: "just text\n"},
		{name: "wildcard host", tc: &toolsys.Context{AllowedHosts: []string{"*"}}, p: WebFetchParams{URL: srv.URL + "/plain"}, want: "just text\n"},
		{name: "no hosts allowed", tc: &toolsys.Context{}, p: WebFetchParams{URL: srv.URL + "/plain"},
			wantErr: "outbound host not allowed: 127.0.0.1 (no outbound hosts are permitted)"},
		{name: "host not in list", tc: &toolsys.Context{AllowedHosts: []string{"*.example.com", "localhost"}}, p: WebFetchParams{URL: srv.URL + "/plain"},
			wantErr: "outbound host not allowed: 127.0.0.1 (permitted: *.example.com, localhost)"},
		{name: "file scheme", tc: local, p: WebFetchParams{URL: "file:///etc/passwd"}, wantErr: `unsupported URL scheme "file"`},
		{name: "ftp scheme", tc: local, p: WebFetchParams{URL: "ftp://127.0.0.1/x"}, wantErr: `unsupported URL scheme "ftp"`},
		{name: "no host", tc: local, p: WebFetchParams{URL: "http:///x"}, wantErr: "has no host"},
		{name: "redirect to a disallowed host", tc: local, p: WebFetchParams{URL: srv.URL + "/redirect-outside"},
			wantErr: "redirect refused: outbound host not allowed: evil.example.com"},
		{name: "redirect to another scheme", tc: local, p: WebFetchParams{URL: srv.URL + "/redirect-scheme"},
			wantErr: `redirect refused: unsupported URL scheme "ftp"`},
		{name: "binary refused", tc: local, p: WebFetchParams{URL: srv.URL + "/binary"}, wantErr: "refusing binary content (image/png)"},
		{name: "http error", tc: local, p: WebFetchParams{URL: srv.URL + "/missing"}, wantErr: "HTTP 404 Not Found from " + srv.URL + "/missing\nno such page"},
		{name: "timeout", opts: Options{FetchTimeout: 50 * time.Millisecond}, tc: local, p: WebFetchParams{URL: srv.URL + "/slow"},
			wantErr: "timed out after 50ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewWebFetch(tt.opts).Execute(context.Background(), tt.p, tt.tc)
			if tt.wantErr != "" {
				r = mustFail(t, r, err)
				if !strings.Contains(r.Content, tt.wantErr) {
					t.Fatalf("content %q does not contain %q", r.Content, tt.wantErr)
				}
				return
			}
			r = mustOK(t, r, err)
			if r.Content != tt.want {
				t.Errorf("content:\n%q\nwant:\n%q", r.Content, tt.want)
			}
			for k, v := range tt.meta {
				if r.Metadata[k] != v {
					t.Errorf("metadata[%s] = %#v, want %#v", k, r.Metadata[k], v)
				}
			}
		})
	}
}

func TestWebFetch_CallerCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewWebFetch(Options{}).Execute(ctx, WebFetchParams{URL: srv.URL}, &toolsys.Context{AllowedHosts: []string{"127.0.0.1"}})
	if err == nil {
		t.Fatal("a cancelled fetch returned no error")
	}
}

func TestHostAllowed(t *testing.T) {
	tests := []struct {
		host    string
		allowed []string
		want    bool
	}{
		{"example.com", nil, false},
		{"example.com", []string{"*"}, true},
		{"example.com", []string{"example.com"}, true},
		{"EXAMPLE.com.", []string{"example.COM"}, true},
		{"api.example.com", []string{"*.example.com"}, true},
		{"a.b.example.com", []string{"*.example.com"}, true},
		{"example.com", []string{"*.example.com"}, false},
		{"badexample.com", []string{"*.example.com"}, false},
		{"example.com.evil.net", []string{"example.com"}, false},
		{"::1", []string{"[::1]"}, true},
		{"", []string{"*"}, false},
		{"x.com", []string{"", " "}, false},
	}
	for _, tt := range tests {
		if got := hostAllowed(tt.host, tt.allowed); got != tt.want {
			t.Errorf("hostAllowed(%q, %q) = %v, want %v", tt.host, tt.allowed, got, tt.want)
		}
	}
}

// TestWebFetch_ConfiguredHosts checks that the hosts configured on the tool
// let it fetch when the call's Context names none, that the Context's hosts
// take their place when it does, and that the description says which hosts
// may be reached.
func TestWebFetch_ConfiguredHosts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("configured\n"))
	}))
	defer srv.Close()
	tests := []struct {
		name    string
		hosts   []string
		tc      *toolsys.Context
		wantOK  bool
		wantDoc string
	}{
		{"none configured", nil, &toolsys.Context{}, false, "Only permitted hosts can be reached; binary content is refused."},
		{"configured", []string{"127.0.0.1"}, &toolsys.Context{}, true, "Permitted hosts: 127.0.0.1."},
		{"any", []string{"*"}, nil, true, "Any host is permitted."},
		{"the call's hosts take their place", []string{"127.0.0.1"}, &toolsys.Context{AllowedHosts: []string{"docs.example.com"}}, false, "Permitted hosts: 127.0.0.1."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wf := NewWebFetch(Options{FetchAllowedHosts: tt.hosts})
			if d := wf.Description(); !strings.HasSuffix(d, tt.wantDoc) {
				t.Errorf("description %q does not end with %q", d, tt.wantDoc)
			}
			r, err := wf.Execute(t.Context(), WebFetchParams{URL: srv.URL}, tt.tc)
			if err != nil {
				t.Fatal(err)
			}
			if ok := !r.IsError && r.Content == "configured\n"; ok != tt.wantOK {
				t.Errorf("result %+v, want fetched = %v", r, tt.wantOK)
			}
			if !tt.wantOK && !strings.Contains(r.Content, "outbound host not allowed") {
				t.Errorf("refusal %q does not say why", r.Content)
			}
		})
	}
}
