package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// startServe runs `agcore serve` with args on a free loopback port and
// returns its base URL; cancelling the test's context stops it, and the
// returned channel yields the command's error.
func startServe(t *testing.T, ctx context.Context, args ...string) (string, <-chan error) {
	t.Helper()
	return startServeConfig(t, ctx, "", args...)
}

// startServeConfig is startServe with the configuration file configPath
// (--config).
func startServeConfig(t *testing.T, ctx context.Context, configPath string, args ...string) (string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	a := &app{stdout: pw, stderr: io.Discard, getenv: func(string) string { return "" }, log: zerolog.Nop(), configPath: configPath}
	cmd := newServeCmd(a)
	cmd.SetArgs(append([]string{"--addr", "127.0.0.1:0", "--data-dir", filepath.Join(t.TempDir(), "data"),
		"--workspace", filepath.Join(t.TempDir(), "ws")}, args...))
	cmd.SetOut(pw)
	done := make(chan error, 1)
	go func() {
		err := cmd.ExecuteContext(ctx)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no output: %v", <-done)
	}
	line := sc.Text()
	url, ok := strings.CutPrefix(line, "agcore API listening on ")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	return url, done
}

func request(t *testing.T, method, url, token, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if strings.EqualFold(header[i], "Host") {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestServe(t *testing.T) {
	ctx, stop := context.WithCancel(t.Context())
	url, done := startServe(t, ctx, "--token", "tok", "--permission-mode", "bypass")

	if code, body := request(t, "GET", url+"/v1/sessions", "", ""); code != http.StatusUnauthorized {
		t.Errorf("without token: %d %s", code, body)
	}
	if code, body := request(t, "GET", url+"/healthz", "", ""); code != http.StatusOK {
		t.Errorf("healthz: %d %s", code, body)
	}
	if code, body := request(t, "POST", url+"/v1/sessions", "tok", `{"id":"s1"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body := request(t, "POST", url+"/v1/sessions/s1/turns", "tok", `{"input":"Summarise the project"}`)
	var res struct {
		Outcome string `json:"outcome"`
		Text    string `json:"text"`
	}
	if err := json.Unmarshal([]byte(body), &res); code != http.StatusOK || err != nil || res.Outcome != "completed" || res.Text == "" {
		t.Fatalf("turn: %d %s", code, body)
	}
	if code, body := request(t, "GET", url+"/metrics", "tok", ""); code != http.StatusOK ||
		!strings.Contains(body, `agcore_turns_total{outcome="completed"} 1`) || !strings.Contains(body, `agcore_tool_calls_total{source="builtin",tool="write_file"} 1`) {
		t.Errorf("metrics: %d %s", code, body)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("serve returned %v", err)
	}
}

func TestServe_BadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"permission mode", []string{"--permission-mode", "yolo"}, "--permission-mode"},
		{"address", []string{"--addr", "127.0.0.1:99999"}, "--addr 127.0.0.1:99999: port 99999 is out of range"},
		{"wildcard origin", []string{"--cors-origin", "https://ok.example", "--cors-origin", "*"}, `--cors-origin: origin "*"`},
		{"origin without scheme", []string{"--cors-origin", "console.example.com"}, `--cors-origin: origin "console.example.com"`},
		{"host with a scheme", []string{"--allowed-host", "http://agents.internal"}, `--allowed-host: allowed host "http://agents.internal"`},
		{"negative body timeout", []string{"--body-timeout", "-1s"}, "--body-timeout must not be negative"},
		{"negative header timeout", []string{"--read-header-timeout", "-1s"}, "--read-header-timeout must not be negative"},
		{"negative idle timeout", []string{"--idle-timeout", "-1s"}, "--idle-timeout must not be negative"},
		{"negative connection cap", []string{"--max-connections", "-1"}, "--max-connections must not be negative"},
		{"token and no auth", []string{"--token", "t", "--insecure-no-auth"}, "--insecure-no-auth and --token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &app{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }, log: zerolog.Nop()}
			cmd := newServeCmd(a)
			cmd.SetArgs(append([]string{"--data-dir", t.TempDir(), "--workspace", t.TempDir()}, tt.args...))
			cmd.SetOut(io.Discard)
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			err := cmd.ExecuteContext(t.Context())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestServeExposure checks which listen addresses need a token: any that
// is not a loopback address, unless --insecure-no-auth says otherwise.
func TestServeExposure(t *testing.T) {
	tests := []struct {
		addr, token string
		insecure    bool
		wantErr     bool
		wantWarn    bool
	}{
		{"127.0.0.1:8080", "", false, false, false},
		{"127.0.0.1:0", "", true, false, false}, // nothing to warn about
		{"localhost:8080", "", false, false, false},
		{"[::1]:8080", "", false, false, false},
		{"127.9.9.9:8080", "", false, false, false},
		{"0.0.0.0:8080", "", false, true, false},
		{":8080", "", false, true, false},
		{"[::]:8080", "", false, true, false},
		{"192.168.1.10:8080", "", false, true, false},
		{"agents.internal:8080", "", false, true, false}, // a name may resolve to anything
		{"0.0.0.0:8080", "tok", false, false, false},
		{"0.0.0.0:8080", "", true, false, true},
		{":8080", "", true, false, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s token=%q insecure=%v", tt.addr, tt.token, tt.insecure), func(t *testing.T) {
			warn, err := checkExposure(tt.addr, tt.token, tt.insecure)
			if tt.wantErr {
				if _, ok := errors.AsType[*usageError](err); !ok {
					t.Fatalf("err = %v, want a usage error", err)
				}
				for _, flag := range []string{"--token", "--insecure-no-auth", tt.addr} {
					if !strings.Contains(err.Error(), flag) {
						t.Errorf("error %q does not name %s", err, flag)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if (warn != "") != tt.wantWarn || tt.wantWarn && !strings.Contains(warn, "--token") {
				t.Errorf("warning %q, want one: %v", warn, tt.wantWarn)
			}
		})
	}
}

// TestServe_RefusesOpenBindWithoutToken runs the command line with an
// address every host can reach and no token: it exits 2, saying what to
// do, before it listens or creates anything.
func TestServe_RefusesOpenBindWithoutToken(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		t.Run(addr, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			// Should the server start anyway, its first line of output
			// stops it at once.
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var out, errOut strings.Builder
			code := run(ctx, []string{"serve", "--addr", addr, "--data-dir", data, "--workspace", filepath.Join(t.TempDir(), "ws")},
				writerFunc(func(p []byte) (int, error) { cancel(); return out.Write(p) }), &errOut,
				func(string) string { return "" })
			stdout, stderr := out.String(), errOut.String()
			if code != exitUsage {
				t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, exitUsage, stdout, stderr)
			}
			for _, want := range []string{"--token", "--insecure-no-auth"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stdout, "listening") {
				t.Errorf("it listened: %s", stdout)
			}
			if _, err := os.Stat(data); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the data directory was created (%v)", err)
			}
		})
	}
}

// writerFunc is an io.Writer that calls itself.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// curlExample is a curl command of the help text, as a request.
type curlExample struct {
	line, method, url, body string
	header                  http.Header
}

// parseCurl reads a curl command line of the help text: single-quoted
// words, -s, -N, -X, -H, -d and one URL. Like curl, -d means POST and a
// form body unless -X and a Content-Type header say otherwise.
func parseCurl(t *testing.T, line string) curlExample {
	t.Helper()
	var words []string
	var word strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if inWord {
		words = append(words, word.String())
	}
	ex := curlExample{line: line, header: http.Header{}}
	for i := 1; i < len(words); i++ {
		next := func() string {
			if i++; i >= len(words) {
				t.Fatalf("%s without a value in %q", words[i-1], line)
			}
			return words[i]
		}
		switch w := words[i]; w {
		case "-s", "-N":
		case "-X":
			ex.method = next()
		case "-H":
			name, value, ok := strings.Cut(next(), ":")
			if !ok {
				t.Fatalf("header %q in %q", words[i], line)
			}
			ex.header.Set(name, strings.TrimSpace(value))
		case "-d":
			ex.body = next()
		default:
			if strings.HasPrefix(w, "-") || ex.url != "" {
				t.Fatalf("the test does not know %q in %q", w, line)
			}
			ex.url = w
		}
	}
	if ex.method == "" {
		ex.method = "GET"
		if ex.body != "" {
			ex.method = "POST"
		}
	}
	if ex.body != "" && ex.header.Get("Content-Type") == "" {
		ex.header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return ex
}

// TestServe_HelpCurlExamples runs every curl example of `agcore serve
// --help`, in order, against the real server in its default (ask) mode:
// create a session, stream a turn until it waits for approval, list the
// approvals, approve the call, and see the turn complete.
func TestServe_HelpCurlExamples(t *testing.T) {
	var help strings.Builder
	cmd := newServeCmd(&app{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }, log: zerolog.Nop()})
	cmd.SetOut(&help)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var examples []curlExample
	for line := range strings.Lines(help.String()) {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "curl ") {
			examples = append(examples, parseCurl(t, line))
		}
	}
	if len(examples) < 4 {
		t.Fatalf("%d curl examples in the help:\n%s", len(examples), help.String())
	}

	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	base, done := startServe(t, ctx)
	addr := strings.TrimPrefix(base, "http://")
	var (
		stream *bufio.Scanner
		call   string
	)
	for _, ex := range examples {
		u, ok := strings.CutPrefix(ex.url, "localhost:8080")
		if !ok {
			t.Fatalf("example %q does not address localhost:8080", ex.line)
		}
		u = strings.ReplaceAll(u, "CALL_ID", call)
		req, err := http.NewRequestWithContext(ctx, ex.method, "http://"+addr+u, strings.NewReader(ex.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = ex.header.Clone()
		req.Host = "localhost:" + addr[strings.LastIndexByte(addr, ':')+1:] // what curl sends
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s\n-> %d %s", ex.line, resp.StatusCode, b)
		}
		if resp.Header.Get("Content-Type") != "text/event-stream" {
			continue
		}
		// The turn waits for approval of its write; the next examples
		// answer it.
		stream = bufio.NewScanner(resp.Body)
		for call == "" && stream.Scan() {
			if data, ok := strings.CutPrefix(stream.Text(), "data: "); ok && strings.Contains(data, `"approval_pending"`) {
				var ev struct {
					Data struct {
						CallID string `json:"call_id"`
					} `json:"data"`
				}
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatal(err)
				}
				call = ev.Data.CallID
			}
		}
		if call == "" {
			t.Fatalf("%s\n-> the stream ended without approval_pending", ex.line)
		}
	}
	if stream == nil {
		t.Fatal("no example streams a turn")
	}
	var last string
	for stream.Scan() {
		if data, ok := strings.CutPrefix(stream.Text(), "data: "); ok {
			last = data
		}
	}
	if !strings.Contains(last, `"turn_ended"`) || !strings.Contains(last, `"outcome":"completed"`) {
		t.Errorf("the streamed turn ended with %s", last)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("serve returned %v", err)
	}
}

// TestServe_OriginsAndHosts checks that the serve section of the
// configuration file sets the allowed origins and host names, and that the
// flags replace it.
func TestServe_OriginsAndHosts(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agcore.yaml")
	if err := os.WriteFile(file, []byte("serve:\n  cors_origins: [https://file.example]\n  allowed_hosts: [file.internal]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		allowed map[string]bool // origins and hosts, allowed or not
	}{
		{"file", nil, map[string]bool{"https://file.example": true, "https://flag.example": false,
			"file.internal": true, "flag.internal": false, "https://evil.example": false, "evil.example": false}},
		{"flags replace the file", []string{"--cors-origin", "https://flag.example", "--allowed-host", "flag.internal"},
			map[string]bool{"https://file.example": false, "https://flag.example": true,
				"file.internal": false, "flag.internal": true, "https://evil.example": false, "evil.example": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, stop := context.WithCancel(t.Context())
			defer stop()
			url, done := startServeConfig(t, ctx, file, tt.args...)
			for v, allowed := range tt.allowed {
				header := []string{"Host", v}
				want := http.StatusMisdirectedRequest
				if strings.HasPrefix(v, "https://") {
					header = []string{"Origin", v, "Sec-Fetch-Site", "cross-site"}
					want = http.StatusForbidden
				}
				if allowed {
					want = http.StatusOK
				}
				if code, body := request(t, "GET", url+"/v1/sessions", "", "", header...); code != want {
					t.Errorf("%s: %d %s, want %d", v, code, body, want)
				}
			}
			// What a foreign page's fetch sends with a Blob or a text body.
			for want, h := range map[int][]string{
				http.StatusForbidden:            {"Content-Type", "", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"},
				http.StatusUnsupportedMediaType: {"Content-Type", "text/plain;charset=UTF-8"},
			} {
				if code, body := request(t, "POST", url+"/v1/sessions", "", `{"id":"evil"}`, h...); code != want {
					t.Errorf("POST with %q: %d %s, want %d", h, code, body, want)
				}
			}
			if code, body := request(t, "GET", url+"/v1/sessions/evil", "", ""); code != http.StatusNotFound {
				t.Errorf("the foreign page created a session: %d %s", code, body)
			}
			stop()
			if err := <-done; err != nil {
				t.Errorf("serve returned %v", err)
			}
		})
	}
}
