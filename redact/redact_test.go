package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"
)

// testKey is shaped like a real OpenAI key; it must never survive.
const testKey = "sk-proj-Zq8TnW4vXy2LmK9pR3sD7fGh"

func TestRedactor_String(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"nothing to hide here", "nothing to hide here"},
		{"using " + testKey + " now", "using [redacted] now"},
		{"Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [redacted]"},
		{"authorization=basic dXNlcjpwYXNz", "authorization=basic [redacted]"},
		{"Authorization: Token abc123456", "Authorization: [redacted]"},
		{"Cookie: session=abc; theme=dark", "Cookie: [redacted]"},
		{"set-cookie: sid=0123456789abcdef; Path=/; HttpOnly", "set-cookie: [redacted]"},
		{`{"X-Api-Key": "k-123456", "model": "gpt"}`, `{"X-Api-Key": "[redacted]", "model": "gpt"}`},
		{`body {"api_key": "hunter22", "model": "gpt"}`, `body {"api_key": "[redacted]", "model": "gpt"}`},
		{"password=hunter22&user=bob", "password=[redacted]&user=bob"},
		{"client_secret: s3cr3t", "client_secret: [redacted]"},
		{"GET https://h/v1?key=AIzaSyA&alt=json", "GET https://h/v1?key=[redacted]&alt=json"},
		{"GET https://h/x?a=1&token=t0k3n#frag", "GET https://h/x?a=1&token=[redacted]#frag"},
		{"gh token ghp_0123456789abcdefghijABCDEFGHIJklmnop here", "gh token [redacted] here"},
		{"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[redacted]"},
		{"slack xoxb-1234567890-abcdefghij", "slack [redacted]"},
		{"aws AKIAIOSFODNN7EXAMPLE id", "aws [redacted] id"},
		{"google AIzaSyA-0123456789abcdefghijklmnopqrstu", "google [redacted]"},
		// Words that merely look like the patterns stay readable.
		{`unknown key: "model"`, `unknown key: "model"`},
		{"unexpected token: '}'", "unexpected token: '}'"},
		{"task-list and risk-assessment", "task-list and risk-assessment"},
		{"prompt_tokens=12 max_tokens=100", "prompt_tokens=12 max_tokens=100"},
		{"sk-short", "sk-short"},
		{"a basic understanding of bearer authentication", "a basic understanding of bearer authentication"},
		{"password := r.FormValue(name)", "password := r.FormValue(name)"},
		{"AKIAIOSFODNN7EXAMPLEX is too long", "AKIAIOSFODNN7EXAMPLEX is too long"},
	}
	var r *Redactor // shapes alone
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := r.String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := r.String(got); again != got {
				t.Errorf("String is not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestRedactor_Content_KeepsPairs(t *testing.T) {
	r := New()
	r.Add("hunter2-db-pass", "<secret_ref:DB>")
	in := "password = os.Getenv(\"P\")\napi_key: example\nconnect with hunter2-db-pass\nAuthorization: Bearer abc.def-ghi_jkl\n"
	want := "password = os.Getenv(\"P\")\napi_key: example\nconnect with <secret_ref:DB>\nAuthorization: Bearer [redacted]\n"
	if got := r.Content(in); got != want {
		t.Errorf("Content:\n got %q\nwant %q", got, want)
	}
}

func TestRedactor_KnownValues(t *testing.T) {
	const secret = `p@ss "w0rd"/x?`
	r := New()
	r.Add(secret, "<secret_ref:PASS>")
	r.Add("abc", "") // too short: ignored
	jsonForm, _ := json.Marshal(secret)
	tests := map[string]string{
		"plain":        "the password is " + secret,
		"json":         `{"text":` + string(jsonForm) + `}`,
		"query":        "https://h/login?u=bob&p=" + url.QueryEscape(secret),
		"path":         "https://h/" + url.PathEscape(secret) + "/x",
		"repeated":     secret + secret,
		"inside words": "x" + secret + "y",
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			for _, got := range []string{r.String(in), r.Content(in), string(r.Bytes([]byte(in)))} {
				if strings.Contains(got, secret) || strings.Contains(got, string(jsonForm[1:len(jsonForm)-1])) ||
					strings.Contains(got, url.QueryEscape(secret)) || strings.Contains(got, url.PathEscape(secret)) {
					t.Errorf("%q still holds the secret: %q", in, got)
				}
				if !strings.Contains(got, "<secret_ref:PASS>") {
					t.Errorf("%q: placeholder missing in %q", in, got)
				}
			}
		})
	}
	if got := r.String("abc abc"); got != "abc abc" {
		t.Errorf("a value shorter than MinLength was replaced: %q", got)
	}
}

func TestRedactor_AddLongestFirst(t *testing.T) {
	r := New()
	r.Add("token-1234", "<A>")
	r.Add("token-1234-extended", "<B>")
	if got := r.String("x token-1234-extended y token-1234"); got != "x <B> y <A>" {
		t.Errorf("got %q", got)
	}
}

func TestRedactor_Error(t *testing.T) {
	r := New()
	r.Add("s3cret-value", "")
	base := fmt.Errorf("open s3cret-value: %w", fs.ErrNotExist)
	err := r.Error(base)
	if strings.Contains(err.Error(), "s3cret-value") {
		t.Errorf("message still holds the secret: %v", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("errors.Is lost the chain")
	}
	clean := errors.New("nothing here")
	if got := r.Error(clean); got != clean {
		t.Error("an error with nothing to mask was wrapped")
	}
	if r.Error(nil) != nil {
		t.Error("nil error became non-nil")
	}
}

func TestRedactor_JSON(t *testing.T) {
	r := New()
	r.Add("known-secret-1", "")
	in := []byte(`{"api_key":{"n":[1,"x"]},"msg":"Bearer abc.def-123 and known-secret-1","n":1.50,"ok":true,"z":null,"list":["` + testKey + `"]}` + "\n" + `{"a":"b"}`)
	out := r.JSON(in)
	if !json.Valid(bytes.SplitN(out, []byte("\n"), 2)[0]) {
		t.Fatalf("not JSON: %s", out)
	}
	want := `{"api_key":"[redacted]","msg":"Bearer [redacted] and [redacted]","n":1.50,"ok":true,"z":null,"list":["[redacted]"]}` + "\n" + `{"a":"b"}`
	if string(out) != want {
		t.Errorf("JSON:\n got %s\nwant %s", out, want)
	}
	plain := []byte("not json password=hunter22")
	if got := string(r.JSON(plain)); got != "not json password=[redacted]" {
		t.Errorf("text fallback: %q", got)
	}
	clean := []byte(`{"model":"gpt"}`)
	if got := r.JSON(clean); &got[0] != &clean[0] {
		t.Error("clean input was copied")
	}
}

func TestRedactor_Writers(t *testing.T) {
	r := New()
	r.Add("known-secret-1", "")
	var text, js bytes.Buffer
	fmt.Fprintf(r.Writer(&text), "line with known-secret-1 and %s\n", testKey)
	fmt.Fprintf(r.JSONWriter(&js), `{"password":5,"m":"known-secret-1"}`+"\n")
	if got := text.String(); got != "line with [redacted] and [redacted]\n" {
		t.Errorf("Writer: %q", got)
	}
	if got := js.String(); got != `{"password":"[redacted]","m":"[redacted]"}`+"\n" {
		t.Errorf("JSONWriter: %q", got)
	}
}

func TestSecretKey(t *testing.T) {
	tests := map[string]bool{
		"api_key": true, "apiKey": true, "APIKey": true, "x-api-key": true, "openai.api_key": true,
		"Authorization": true, "token": true, "access_token": true, "refresh-token": true, "bearerToken": true,
		"client_secret": true, "secret": true, "password": true, "db_passwd": true, "credentials": true,
		"cookie": true, "Set-Cookie": true, "private_key": true, "aws_access_key_id": true,
		"prompt_tokens": false, "max_tokens": false, "tokenizer": false, "model": false, "key": false,
		"session": false, "tool": false, "base_url": false, "": false,
	}
	for name, want := range tests {
		if got := SecretKey(name); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactor_ConcurrentAdd(t *testing.T) {
	r := New()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			r.Add(fmt.Sprintf("value-%04d", i), "")
		}
	}()
	for range 200 {
		_ = r.String("value-0001 value-0199")
	}
	<-done
	if got := r.String("value-0001 value-0199"); got != "[redacted] [redacted]" {
		t.Errorf("after adds: %q", got)
	}
}

func BenchmarkRedactor_String(b *testing.B) {
	r := New()
	for i := range 8 {
		r.Add(fmt.Sprintf("configured-secret-%d", i), "")
	}
	clean := strings.Repeat("the quick brown fox jumps over the lazy dog ", 40)
	dirty := clean + " Authorization: Bearer abc.def-123 " + testKey
	b.Run("clean", func(b *testing.B) {
		for b.Loop() {
			_ = r.String(clean)
		}
	})
	b.Run("dirty", func(b *testing.B) {
		for b.Loop() {
			_ = r.String(dirty)
		}
	})
}

func TestRedactor_ContentJSON(t *testing.T) {
	r := New()
	r.Add("known-secret-1", "<secret_ref:K>")
	in := []byte(`{"type":"tool_result","data":{"password":"kept","args":{"token":"x"},"content":"password = y; key known-secret-1; Bearer abc.def-123 \"q\""}}`)
	want := `{"type":"tool_result","data":{"password":"kept","args":{"token":"x"},"content":"password = y; key <secret_ref:K>; Bearer [redacted] \"q\""}}`
	if got := string(r.ContentJSON(in)); got != want {
		t.Errorf("ContentJSON:\n got %s\nwant %s", got, want)
	}
	clean := []byte(`{"usage":{"prompt_tokens":3},"text":"a key and a token"}`)
	if got := r.ContentJSON(clean); &got[0] != &clean[0] {
		t.Errorf("clean input was rewritten: %s", got)
	}
}

func BenchmarkRedactor_ContentJSON(b *testing.B) {
	r := New()
	for i := range 8 {
		r.Add(fmt.Sprintf("configured-value-%d-0123456789", i), "")
	}
	entry := []byte(`{"turn":0,"call_id":"call_1","name":"read_file","content":"` + strings.Repeat(`a line of an ordinary source file, with a key word and a token or two\n`, 8) + `","duration_ns":95621}`)
	for _, tc := range []struct {
		name string
		r    *Redactor
	}{{"shapes", nil}, {"known8", r}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(entry)))
			for b.Loop() {
				_ = tc.r.ContentJSON(entry)
			}
		})
	}
}
