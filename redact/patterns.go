package redact

import (
	"regexp"
	"strings"
)

// Mask is what a credential found by its shape, or a known value added
// without a replacement, is replaced with.
const Mask = "[redacted]"

var (
	// authScheme matches the credentials of a Bearer or Basic authorization;
	// credentialLike decides whether the word after the scheme is one.
	authScheme = regexp.MustCompile(`(?i)\b(bearer|basic)(\s+)([A-Za-z0-9._~+/=-]{8,})`)
	// header matches the value of a credential-carrying HTTP header written
	// as "Name: value", as in a dumped request or a JSON object of headers.
	// The value runs to the end of the line or the closing quote.
	header = regexp.MustCompile(`(?i)\b(proxy-authorization|authorization|set-cookie|cookie|x-api-key|api-key)(["']?[ \t]*:[ \t]*["']?)([^\s"'\[][^\r\n"']*)`)
	// shapes match keys whose form alone says what they are.
	shapes = []*regexp.Regexp{
		regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{8,}`),                     // OpenAI, Anthropic, and many OpenAI-compatible services
		regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`), // GitHub tokens
		regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`),             // GitHub fine-grained tokens
		regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`),            // Slack tokens
		regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`),              // AWS access key ids
		regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`),                    // Google API keys
	}
	// queryParam matches a credential in a URL query.
	queryParam = regexp.MustCompile(`(?i)([?&](?:token|key|sig|signature|api_key|apikey|access_token)=)[^&#\s"'\\]+`)
	// keyValue matches a credential written as name=value or name: value.
	// Bare "key" and "token" are left out: "unknown key: x" and "unexpected
	// token: x" are common in error messages. A value starting with "[" is
	// not matched, so masking twice changes nothing, nor one starting with
	// "=" ("password := ..." in Go source).
	keyValue = regexp.MustCompile(`(?i)\b(authorization|x-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|secret|password|passwd)(["']?[ \t]*[:=][ \t]*["']?)([^\s"'\\&,;}\][=][^\s"'\\&,;}\]]*)`)
)

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

// maskShapes masks the credentials every mode masks: authorizations,
// header values, keys of known shapes and URL query credentials.
func maskShapes(s string) string {
	s = authScheme.ReplaceAllStringFunc(s, func(m string) string {
		sub := authScheme.FindStringSubmatch(m)
		if !credentialLike(sub[3]) {
			return m
		}
		return sub[1] + sub[2] + Mask
	})
	s = header.ReplaceAllStringFunc(s, func(m string) string {
		sub := header.FindStringSubmatch(m)
		v := sub[3]
		if scheme, _, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "basic")) {
			return m // the credential after the scheme is already masked, or was prose
		}
		return sub[1] + sub[2] + Mask
	})
	for _, re := range shapes {
		s = re.ReplaceAllString(s, Mask)
	}
	return queryParam.ReplaceAllString(s, "${1}"+Mask)
}

// maskPairs masks the values of name=value pairs whose name is a
// credential's.
func maskPairs(s string) string {
	return keyValue.ReplaceAllStringFunc(s, func(m string) string {
		sub := keyValue.FindStringSubmatch(m)
		if v := sub[3]; strings.EqualFold(v, "bearer") || strings.EqualFold(v, "basic") {
			return m // the credential after the scheme is handled by authScheme
		}
		return sub[1] + sub[2] + Mask
	})
}

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

// fragments are the lower-case pieces of text that every SecretKey name and
// every pattern above contains.
var fragments = [...]string{"key", "auth", "token", "secret", "passw", "credential", "cookie", "bearer", "basic", "sk-", "sig",
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "akia", "asia", "aiza"}

// mightMatch is a quick filter: it reports false only when s holds no
// fragment in any ASCII case, so that no SecretKey field and no pattern can
// match it. The two non-ASCII runes that fold to ASCII letters in
// case-insensitive matching (U+017F ſ and U+212A K) make it report true.
func mightMatch[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 0xC5 && i+1 < len(s) && s[i+1] == 0xBF, // U+017F
			c == 0xE2 && i+2 < len(s) && s[i+1] == 0x84 && s[i+2] == 0xAA: // U+212A
			return true
		}
		c = lowerASCII(c)
		switch c {
		case 'a', 'b', 'c', 'g', 'k', 'p', 's', 't', 'x': // the first letters of fragments
		default:
			continue
		}
		for _, f := range fragments {
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
