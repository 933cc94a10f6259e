package redact

import (
	"regexp"
	"strings"
)

// Mask is what a credential found by its shape, or a known value added
// without a replacement, is replaced with.
const Mask = "[redacted]"

// A pattern recognises one kind of credential. Every match starts at one of
// its fragments (lead bytes before it, for a query's '?' or '&'), so text is
// scanned once for fragments and a pattern's expression, anchored, runs
// only where one is found: Go's regular expressions cannot skip ahead to a
// case-insensitive literal themselves. Names match in any ASCII case
// (written with ci rather than a case-insensitive flag, which would also
// fold the Kelvin sign and the long s into k and s where no fragment scan
// looks).
type pattern struct {
	// re is anchored at the start of the match.
	re *regexp.Regexp
	// frags are lower-case ASCII; the text may hold them in any case.
	frags []string
	// lead is the number of bytes of a match before its fragment.
	lead int
	// boundary requires the match not to follow a letter, digit or '_'.
	boundary bool
	// mask returns the replacement of a match from its submatches (sub[0]
	// is the whole match); returning sub[0] leaves the text as it is.
	mask func(sub []string) string
}

// ci returns the expression expr matching its ASCII letters in either
// case: "ab|c" becomes "[Aa][Bb]|[Cc]". expr must hold no letter inside a
// character class.
func ci(expr string) string {
	var b strings.Builder
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if lo := lowerASCII(c); 'a' <= lo && lo <= 'z' {
			b.WriteByte('[')
			b.WriteByte(lo - 'a' + 'A')
			b.WriteByte(lo)
			b.WriteByte(']')
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// maskAll masks the whole match.
func maskAll([]string) string { return Mask }

// maskValue keeps the first two groups of the match (a name and its
// separator) and masks the rest.
func maskValue(sub []string) string { return sub[1] + sub[2] + Mask }

// schemeWord reports whether v is "Bearer" or "Basic", in any case.
func schemeWord(v string) bool {
	return strings.EqualFold(v, "bearer") || strings.EqualFold(v, "basic")
}

var (
	// authScheme matches the credentials of a Bearer or Basic authorization.
	authScheme = &pattern{
		re:       regexp.MustCompile(`^(` + ci("bearer|basic") + `)(\s+)([A-Za-z0-9._~+/=-]{8,})`),
		frags:    []string{"bearer", "basic"},
		boundary: true,
		mask: func(sub []string) string {
			if !credentialLike(sub[3]) {
				return sub[0]
			}
			return maskValue(sub)
		},
	}
	// header matches the value of a credential-carrying HTTP header written
	// as "Name: value", as in a dumped request or a JSON object of headers.
	// The value runs to the end of the line, a quote or a backslash.
	header = &pattern{
		re:       regexp.MustCompile(`^(` + ci("proxy-authorization|authorization|set-cookie|cookie|x-api-key|api-key") + `)(["']?[ \t]*:[ \t]*["']?)([^\s"'\\\[][^\r\n"'\\]*)`),
		frags:    []string{"proxy-authorization", "authorization", "set-cookie", "cookie", "x-api-key", "api-key"},
		boundary: true,
		mask: func(sub []string) string {
			if scheme, _, ok := strings.Cut(sub[3], " "); ok && schemeWord(scheme) {
				return sub[0] // the credential after the scheme is authScheme's
			}
			return maskValue(sub)
		},
	}
	// shapes match keys whose form alone says what they are.
	shapes = []*pattern{
		{re: regexp.MustCompile(`^sk-[A-Za-z0-9_-]{8,}`), frags: []string{"sk-"}, boundary: true, mask: maskAll},                                  // OpenAI, Anthropic, many OpenAI-compatible services
		{re: regexp.MustCompile(`^(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`), frags: []string{"gh"}, boundary: true, mask: maskAll},               // GitHub
		{re: regexp.MustCompile(`^github_pat_[A-Za-z0-9_]{20,}`), frags: []string{"github_pat_"}, boundary: true, mask: maskAll},                  // GitHub fine-grained
		{re: regexp.MustCompile(`^xox[abposr]-[A-Za-z0-9-]{10,}`), frags: []string{"xox"}, boundary: true, mask: maskAll},                         // Slack
		{re: regexp.MustCompile(`^(?:AKIA|ASIA)[A-Z0-9]{16}(?:[^A-Za-z0-9_]|$)`), frags: []string{"akia", "asia"}, boundary: true, mask: maskAWS}, // AWS access key ids
		{re: regexp.MustCompile(`^AIza[0-9A-Za-z_-]{35}`), frags: []string{"aiza"}, boundary: true, mask: maskAll},                                // Google API keys
	}
	// queryParam matches a credential in a URL query.
	queryParam = &pattern{
		re:    regexp.MustCompile(`^([?&](?:` + ci("token|key|sig|signature|api_key|apikey|access_token") + `)=)()[^&#\s"'\\]+`),
		frags: []string{"token=", "key=", "sig=", "signature=", "api_key=", "apikey=", "access_token="},
		lead:  1,
		mask:  maskValue,
	}
	// keyValue matches a credential written as name=value or name: value.
	// Bare "key" and "token" are left out: "unknown key: x" and "unexpected
	// token: x" are common in error messages. A value starting with "[" is
	// not matched, so masking twice changes nothing, nor one starting with
	// "=" ("password := ..." in Go source), nor "Bearer" or "Basic", whose
	// credential is authScheme's.
	keyValue = &pattern{
		re:       regexp.MustCompile(`^(` + ci("authorization|x-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|secret|password|passwd") + `)(["']?[ \t]*[:=][ \t]*["']?)([^\s"'\\&,;}\][=][^\s"'\\&,;}\]]*)`),
		frags:    []string{"authorization", "x-api-key", "api", "access", "refresh", "id_token", "id-token", "idtoken", "client", "secret", "passw"},
		boundary: true,
		mask: func(sub []string) string {
			if schemeWord(sub[3]) {
				return sub[0]
			}
			return maskValue(sub)
		},
	}
)

// maskAWS masks an access key id, keeping the character after it that the
// expression matched to end the id.
func maskAWS(sub []string) string {
	if m := sub[0]; len(m) > 20 {
		return Mask + m[20:]
	}
	return Mask
}

// credentialLike reports whether the word after "Bearer" or "Basic" looks
// like a credential rather than prose ("basic understanding", "bearer
// tokens"): it holds a digit or one of ._~+/=-, or mixes upper and lower
// case after its first letter.
func credentialLike(w string) bool {
	upper, lower := false, false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case '0' <= c && c <= '9', strings.IndexByte("._~+/=-", c) >= 0:
			return true
		case 'A' <= c && c <= 'Z':
			upper = upper || i > 0
		default:
			lower = true
		}
	}
	return upper && lower
}

// A matcher applies a set of patterns in one pass over the text.
type matcher struct {
	// pairs has the bit of every two-byte string a fragment starts with,
	// in any ASCII case: most positions of a text are passed over with one
	// look-up.
	pairs [1 << 16 / 64]uint64
	// byFirst lists, for each byte, the fragments that start with it (in
	// either case) and their patterns.
	byFirst [256][]candidate
}

// maybe reports whether a fragment may start at s[i].
func maybe[T string | []byte](m *matcher, s T, i int) bool {
	if i+1 >= len(s) {
		return false // every fragment is at least two bytes long
	}
	k := uint(s[i])<<8 | uint(s[i+1])
	return m.pairs[k>>6]&(1<<(k&63)) != 0
}

type candidate struct {
	frag string
	p    *pattern
}

func newMatcher(patterns ...*pattern) *matcher {
	m := &matcher{}
	for _, p := range patterns {
		for _, f := range p.frags {
			lo, up := f[0], f[0]
			if 'a' <= lo && lo <= 'z' {
				up = lo - 'a' + 'A'
			}
			m.byFirst[lo] = append(m.byFirst[lo], candidate{f, p})
			if up != lo {
				m.byFirst[up] = append(m.byFirst[up], candidate{f, p})
			}
			for _, a := range cases(f[0]) {
				for _, b := range cases(f[1]) {
					k := uint(a)<<8 | uint(b)
					m.pairs[k>>6] |= 1 << (k & 63)
				}
			}
		}
	}
	return m
}

// cases returns c in both ASCII cases, or c alone if it is not a letter.
func cases(c byte) []byte {
	if lo := lowerASCII(c); 'a' <= lo && lo <= 'z' {
		return []byte{lo, lo - 'a' + 'A'}
	}
	return []byte{c}
}

// The matchers of the two modes: content masks credentials by their shape;
// all also masks name=value pairs.
var (
	contentMatcher = newMatcher(append([]*pattern{authScheme, header, queryParam}, shapes...)...)
	allMatcher     = newMatcher(append([]*pattern{authScheme, header, queryParam, keyValue}, shapes...)...)
)

// holds reports whether s holds a fragment of m: whether apply may change
// it.
func holds[T string | []byte](m *matcher, s T) bool {
	for i := 0; i < len(s); i++ {
		if !maybe(m, s, i) {
			continue
		}
		for _, c := range m.byFirst[s[i]] {
			if hasPrefixFold(s[i:], c.frag) {
				return true
			}
		}
	}
	return false
}

// apply masks every match of m's patterns in s, scanning once: at each
// fragment it tries the fragment's patterns in order and replaces the first
// match that the pattern masks, then goes on after it.
func (m *matcher) apply(s string) string {
	var b strings.Builder
	last := 0 // s[:last] is written to b, or nothing was replaced yet
	for i := 0; i < len(s); i++ {
		if !maybe(m, s, i) {
			continue
		}
		for _, c := range m.byFirst[s[i]] {
			start := i - c.p.lead
			if start < last || !hasPrefixFold(s[i:], c.frag) || c.p.boundary && start > 0 && wordByte(s[start-1]) {
				continue
			}
			loc := c.p.re.FindStringSubmatchIndex(s[start:])
			if loc == nil {
				continue
			}
			sub := make([]string, len(loc)/2)
			for j := range sub {
				if loc[2*j] >= 0 {
					sub[j] = s[start+loc[2*j] : start+loc[2*j+1]]
				}
			}
			repl := c.p.mask(sub)
			if repl == sub[0] {
				continue
			}
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:start])
			b.WriteString(repl)
			last = start + loc[1]
			i = last - 1
			break
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// wordByte reports whether c is a letter, a digit or '_' in ASCII.
func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// SecretKey reports whether a field named name holds a credential: its name,
// ignoring case, contains authorization, secret, password, passwd,
// credential or cookie, or api, access or private followed by key (with
// or without one of the separators "_", "-", "." and " " between them), or
// ends in token (so "access_token" is secret and "prompt_tokens" is not).
func SecretKey(name string) bool {
	n := strings.ToLower(name)
	for _, s := range [...]string{"authorization", "secret", "password", "passwd", "credential", "cookie"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	for _, word := range [...]string{"api", "access", "private"} {
		for _, sep := range [...]string{"", "_", "-", ".", " "} {
			if strings.Contains(n, word+sep+"key") {
				return true
			}
		}
	}
	return strings.HasSuffix(n, "token")
}

// keyMatcher finds the fragments every SecretKey name contains, for the
// quick check of JSON.
var keyMatcher = newMatcher(&pattern{frags: []string{"key", "auth", "token", "secret", "passw", "credential", "cookie"}})

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
