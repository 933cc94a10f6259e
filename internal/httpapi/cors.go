package httpapi

import (
	"fmt"
	"net/http"
	"strings"
)

// The CORS grant of an allowed origin: the API's methods and the request
// headers its clients send. Credentials (cookies) are never allowed: the
// API authenticates with a bearer token.
const (
	corsAllowMethods = "GET, POST, DELETE"
	corsAllowHeaders = "Authorization, Content-Type, Last-Event-ID, Accept"
	// corsMaxAge is how long, in seconds, a browser may reuse a preflight's
	// answer.
	corsMaxAge = "600"
)

var (
	corsMethods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodDelete: true}
	corsHeaders = map[string]bool{"authorization": true, "content-type": true, "last-event-id": true, "accept": true}
)

// ParseOrigin checks a web origin ("https://console.example.com",
// "http://127.0.0.1:5173") and returns it as browsers send it in the Origin
// header: the scheme and host in lower case, and the port only when it is
// not the scheme's default. Only http and https origins are accepted;
// "null", a path, a query, user information and wildcards are errors.
func ParseOrigin(s string) (string, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	scheme = strings.ToLower(scheme)
	if !ok || scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("origin %q: want http://host[:port] or https://host[:port]", s)
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.ContainsAny(rest, "/?#@*\\ ") {
		return "", fmt.Errorf("origin %q: want only scheme://host[:port], without path, query, user or wildcard", s)
	}
	tls := scheme == "https"
	h, err := parseHostport(rest, defaultPort(tls))
	if err != nil {
		return "", fmt.Errorf("origin %q: %w", s, err)
	}
	return scheme + "://" + h.urlHost(tls), nil
}

// urlHost returns h as the host of a URL: without the port when it is the
// scheme's default.
func (h hostport) urlHost(tls bool) string {
	if h.port != defaultPort(tls) {
		return h.String()
	}
	if strings.Contains(h.name, ":") {
		return "[" + h.name + "]"
	}
	return h.name
}

// originPolicy decides which browser pages may use the API: pages of the
// server's own origin, and pages of the configured origins, which are
// granted CORS access. Every other page is refused, whatever the method,
// so that it can neither change anything nor read anything.
type originPolicy struct {
	allowed map[string]bool // canonical origins
}

func newOriginPolicy(entries []string) (originPolicy, error) {
	p := originPolicy{allowed: map[string]bool{}}
	for i, e := range entries {
		o, err := ParseOrigin(e)
		if err != nil {
			return originPolicy{}, fmt.Errorf("%w: Config.CORSOrigins[%d]: %w", ErrInvalidConfig, i, err)
		}
		p.allowed[o] = true
	}
	return p, nil
}

// errCrossOrigin is the refusal of a page from a foreign origin. It does
// not repeat the origin.
func errCrossOrigin() *Error {
	return apiErr(http.StatusForbidden, CodeOriginNotAllowed,
		"cross-origin request refused: the page's origin is not allowed to use this API; "+
			"allow it with --cors-origin (config serve.cors_origins)")
}

// check decides whether r comes from a page allowed to use the API. A
// request is cross-origin when it carries an Origin other than the
// server's own (the scheme and Host it was sent to), an Origin "null"
// (sandboxed frames, files), or a Sec-Fetch-Site other than same-origin or
// none. A cross-origin request is served only when its Origin is allowed;
// then check returns that origin, to be granted with CORS headers. A
// request without Origin and Sec-Fetch-Site (curl, a program) is not a
// browser page's and passes.
func (p originPolicy) check(r *http.Request) (grant string, err *Error) {
	origins, sites := r.Header.Values("Origin"), r.Header.Values("Sec-Fetch-Site")
	if len(origins) > 1 || len(sites) > 1 {
		return "", errCrossOrigin()
	}
	cross := false
	if len(sites) == 1 {
		switch strings.ToLower(strings.TrimSpace(sites[0])) {
		case "same-origin", "none":
		default:
			cross = true
		}
	}
	if len(origins) == 0 {
		if cross {
			return "", errCrossOrigin()
		}
		return "", nil
	}
	origin, perr := ParseOrigin(origins[0])
	if perr != nil {
		return "", errCrossOrigin()
	}
	if !cross && origin == selfOrigin(r) {
		return "", nil
	}
	if p.allowed[origin] {
		return origin, nil
	}
	return "", errCrossOrigin()
}

// selfOrigin returns the origin r was sent to, "" when its Host is not
// valid.
func selfOrigin(r *http.Request) string {
	tls := r.TLS != nil
	h, err := parseHostport(r.Host, defaultPort(tls))
	if err != nil {
		return ""
	}
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	return scheme + h.urlHost(tls)
}

// isPreflight reports whether r is a CORS preflight request.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" &&
		r.Header.Get("Access-Control-Request-Method") != ""
}

// preflight answers a CORS preflight that check let through: grant is the
// allowed origin, or "" for a request from the server's own origin, which
// browsers never preflight. The answer is 204 with the API's methods and
// headers, or 403 when the origin, the method or a header is not allowed.
// It needs no token: browsers send none with a preflight.
func preflight(w http.ResponseWriter, r *http.Request, grant string) {
	if grant == "" {
		writeError(w, errCrossOrigin())
		return
	}
	if !corsMethods[r.Header.Get("Access-Control-Request-Method")] {
		writeError(w, apiErr(http.StatusForbidden, CodeOriginNotAllowed,
			"CORS preflight refused: the requested method is not one of %s", corsAllowMethods))
		return
	}
	for _, line := range r.Header.Values("Access-Control-Request-Headers") {
		for name := range strings.SplitSeq(line, ",") {
			if name = strings.ToLower(strings.TrimSpace(name)); name != "" && !corsHeaders[name] {
				writeError(w, apiErr(http.StatusForbidden, CodeOriginNotAllowed,
					"CORS preflight refused: a requested header is not one of %s", corsAllowHeaders))
				return
			}
		}
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", grant)
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	w.WriteHeader(http.StatusNoContent)
}
