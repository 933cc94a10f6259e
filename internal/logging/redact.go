package logging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
)

// Redacted is what a secret is replaced with.
const Redacted = "[redacted]"

var (
	// authScheme matches the credentials of an HTTP Authorization value.
	authScheme = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{4,}`)
	// skKey matches OpenAI-style secret keys (sk-..., sk-proj-...).
	skKey = regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{8,}`)
	// keyValue matches a credential written as name=value or name: value,
	// as in headers and in JSON or YAML text held in a string. Bare "key" and
	// "token" are left out: "unknown key: x" and "unexpected token: x" are
	// common in error messages. A value starting with "[" is not matched, so
	// masking twice changes nothing.
	keyValue = regexp.MustCompile(`(?i)\b(authorization|x-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|secret|password|passwd)(["']?[ \t]*[:=][ \t]*["']?)([^\s"'\\&,;}\][][^\s"'\\&,;}\]]*)`)
	// queryParam matches a credential in a URL query.
	queryParam = regexp.MustCompile(`(?i)([?&](?:token|key|sig|signature)=)[^&#\s"'\\]+`)
)

// SecretKey reports whether a field named name holds a credential: its name,
// ignoring case and the separators "_", "-", "." and " ", contains apikey,
// accesskey, privatekey, authorization, secret, password, passwd, credential
// or cookie, or ends in token (so "access_token" is secret and
// "prompt_tokens" is not).
func SecretKey(name string) bool {
	n := strings.ToLower(name)
	n = strings.NewReplacer("_", "", "-", "", ".", "", " ", "").Replace(n)
	for _, s := range [...]string{"apikey", "accesskey", "privatekey", "authorization", "secret", "password", "passwd", "credential", "cookie"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return strings.HasSuffix(n, "token")
}

// Redact masks what looks like a credential inside s: the credentials of
// "Bearer ..." and "Basic ...", "sk-..." keys, and the values of
// api_key=..., access_token: ..., password=... and similar pairs, and of
// token=, key= and sig= in URL queries. The rest of s is
// kept, so a message stays readable.
func Redact(s string) string {
	if !mightHoldSecret(s) {
		return s
	}
	return redactAll(s)
}

// redactAll is Redact without the quick check.
func redactAll(s string) string {
	s = authScheme.ReplaceAllString(s, "${1}${2}"+Redacted)
	s = skKey.ReplaceAllString(s, Redacted)
	s = queryParam.ReplaceAllString(s, "${1}"+Redacted)
	return keyValue.ReplaceAllStringFunc(s, func(m string) string {
		sub := keyValue.FindStringSubmatch(m)
		if v := sub[3]; strings.EqualFold(v, "bearer") || strings.EqualFold(v, "basic") {
			return m // the credential after the scheme is already masked
		}
		return sub[1] + sub[2] + Redacted
	})
}

// RedactWriter returns a writer that scrubs secrets from JSON log events
// before passing them to w: the value of every field (at any depth) whose name
// is a SecretKey becomes "[redacted]", and every other string is passed
// through Redact. Field order is kept. Input that is not JSON is masked with
// Redact as plain text. The writer is safe for concurrent use and serialises
// its writes to w.
func RedactWriter(w io.Writer) io.Writer {
	return &redactWriter{w: w}
}

type redactWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write scrubs p and writes the result to the underlying writer in one call.
// It reports len(p) on success, as io.Writer requires.
func (rw *redactWriter) Write(p []byte) (int, error) {
	out := p
	if mightHoldSecret(p) {
		out = redactJSON(p)
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if _, err := rw.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redactJSON rewrites the JSON values in p (usually one event and a newline)
// with secrets removed, or masks p as text when it is not JSON.
func redactJSON(p []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	var buf bytes.Buffer
	buf.Grow(len(p))
	for dec.More() {
		if err := rewriteValue(dec, &buf); err != nil {
			return []byte(Redact(string(p)))
		}
		buf.WriteByte('\n')
	}
	if len(bytes.TrimSpace(p[dec.InputOffset():])) > 0 {
		return []byte(Redact(string(p)))
	}
	if !bytes.HasSuffix(p, []byte("\n")) {
		buf.Truncate(max(buf.Len()-1, 0))
	}
	return buf.Bytes()
}

// rewriteValue copies the next JSON value from dec to buf, redacting secrets.
func rewriteValue(dec *json.Decoder, buf *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			buf.WriteByte('{')
			for first := true; dec.More(); first = false {
				ktok, err := dec.Token()
				if err != nil {
					return err
				}
				key, ok := ktok.(string)
				if !ok {
					return fmt.Errorf("object key is %T", ktok)
				}
				if !first {
					buf.WriteByte(',')
				}
				writeString(buf, key)
				buf.WriteByte(':')
				if SecretKey(key) {
					if err := skipValue(dec); err != nil {
						return err
					}
					writeString(buf, Redacted)
					continue
				}
				if err := rewriteValue(dec, buf); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			buf.WriteByte('}')
		case '[':
			buf.WriteByte('[')
			for first := true; dec.More(); first = false {
				if !first {
					buf.WriteByte(',')
				}
				if err := rewriteValue(dec, buf); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			buf.WriteByte(']')
		default:
			return fmt.Errorf("unexpected %v", t)
		}
	case string:
		writeString(buf, Redact(t))
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		fmt.Fprint(buf, t)
	case nil:
		buf.WriteString("null")
	}
	return nil
}

// skipValue consumes the next JSON value from dec.
func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}

// writeString writes s as a JSON string without HTML escaping, as zerolog
// does.
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	buf.Truncate(buf.Len() - 1)
}

// secretFragments are the lower-case pieces of text that every secret key
// name and every pattern above contains.
var secretFragments = [...]string{"key", "auth", "token", "secret", "passw", "credential", "cookie", "bearer", "basic", "sk-", "sig"}

// mightHoldSecret is a quick filter: it reports false only when s holds no
// secretFragment in any ASCII case, so that no SecretKey field and no
// pattern of Redact can match it. The two non-ASCII runes that fold to ASCII
// letters in case-insensitive matching (U+017F ſ and U+212A K) make it report
// true.
func mightHoldSecret[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 0xC5 && i+1 < len(s) && s[i+1] == 0xBF, // U+017F
			c == 0xE2 && i+2 < len(s) && s[i+1] == 0x84 && s[i+2] == 0xAA: // U+212A
			return true
		}
		c = lowerASCII(c)
		switch c {
		case 'a', 'b', 'c', 'k', 'p', 's', 't': // the first letters of secretFragments
		default:
			continue
		}
		for _, f := range secretFragments {
			if f[0] == c && hasPrefixFold(s[i:], f) {
				return true
			}
		}
	}
	return false
}

// hasPrefixFold reports whether s starts with the lower-case ASCII prefix,
// ignoring ASCII case.
func hasPrefixFold[T string | []byte](s T, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for j := range len(prefix) {
		if lowerASCII(s[j]) != prefix[j] {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
