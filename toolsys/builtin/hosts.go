package builtin

import "strings"

// hostAllowed reports whether host (without port) is permitted by allowed:
// "*" permits any host, "*.example.com" any subdomain of example.com (not
// example.com itself), and any other entry exactly that host. Matching
// ignores case, a trailing dot and IPv6 brackets. An empty list permits
// nothing.
func hostAllowed(host string, allowed []string) bool {
	host = normHost(host)
	if host == "" {
		return false
	}
	for _, a := range allowed {
		a = normHost(a)
		switch {
		case a == "*":
			return true
		case strings.HasPrefix(a, "*."):
			if suffix := a[1:]; len(host) > len(suffix) && strings.HasSuffix(host, suffix) {
				return true
			}
		case a != "" && a == host:
			return true
		}
	}
	return false
}

// normHost lower-cases h and strips surrounding space, IPv6 brackets and a
// trailing dot.
func normHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}
