package httpapi

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// hostport is a Host header or an address taken apart: a lower-case name
// (an IPv6 address without brackets) and a decimal port.
type hostport struct {
	name, port string
}

// String returns h as a Host header would carry it.
func (h hostport) String() string { return net.JoinHostPort(h.name, h.port) }

// parseHostport parses a Host header ("name", "name:port", "[v6]",
// "[v6]:port"). A missing port is defPort, which an allowed-host entry
// leaves empty to match every port.
func parseHostport(s, defPort string) (hostport, error) {
	name, port := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return hostport{}, errors.New("an IPv6 address must be closed with ']'")
		}
		name = s[1:end]
		rest := s[end+1:]
		if rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return hostport{}, errors.New("only a port may follow an IPv6 address")
			}
			port = p
		}
		if ip := net.ParseIP(name); ip == nil || ip.To4() != nil {
			return hostport{}, errors.New("brackets must hold an IPv6 address")
		}
	case strings.Count(s, ":") > 1:
		return hostport{}, errors.New("an IPv6 address must be in brackets")
	default:
		if n, p, ok := strings.Cut(s, ":"); ok {
			name, port = n, p
		}
	}
	if name == "" {
		return hostport{}, errors.New("the host name is empty")
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == ':' || c == '_') {
			return hostport{}, fmt.Errorf("the host name has the character %q", c)
		}
	}
	if port == "" {
		if strings.HasSuffix(s, ":") {
			return hostport{}, errors.New("the port is empty")
		}
		port = defPort
	} else {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '+' {
			return hostport{}, errors.New("the port must be a number from 1 to 65535")
		}
		port = strconv.Itoa(n)
	}
	return hostport{name: strings.ToLower(name), port: port}, nil
}

// defaultPort is the port of a URL scheme that names none.
func defaultPort(tls bool) string {
	if tls {
		return "443"
	}
	return "80"
}

// ParseAllowedHost checks an entry of Config.AllowedHosts and returns it
// in canonical form: a host name or address ("agents.internal",
// "10.0.0.5", "[fd00::1]"), which matches on any port, or one with a port
// ("agents.internal:8443"), which matches on that port only. A scheme, a
// path or a wildcard is an error.
func ParseAllowedHost(s string) (string, error) {
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/*?#@ ") {
		return "", fmt.Errorf("allowed host %q: want a host name or host:port, without scheme, path or wildcard", s)
	}
	h, err := parseHostport(s, "")
	if err != nil {
		return "", fmt.Errorf("allowed host %q: %w", s, err)
	}
	if h.port == "" {
		if strings.Contains(h.name, ":") {
			return "[" + h.name + "]", nil
		}
		return h.name, nil
	}
	return h.String(), nil
}

// hostPolicy decides whether a Host header names this server, defeating
// DNS rebinding: a page whose own name an attacker points at the server's
// address sends that name as Host, and it is refused.
type hostPolicy struct {
	anyPort  map[string]bool // names allowed on every port
	withPort map[string]bool // "name:port" allowed on that port
}

func newHostPolicy(entries []string) (hostPolicy, error) {
	p := hostPolicy{anyPort: map[string]bool{}, withPort: map[string]bool{}}
	for i, e := range entries {
		if _, err := ParseAllowedHost(e); err != nil {
			return hostPolicy{}, fmt.Errorf("%w: Config.AllowedHosts[%d]: %w", ErrInvalidConfig, i, err)
		}
		h, _ := parseHostport(e, "")
		if h.port == "" {
			p.anyPort[h.name] = true
		} else {
			p.withPort[h.String()] = true
		}
	}
	return p, nil
}

// allows reports whether host, the request's Host header, names the server
// on the connection whose local address is local (nil when unknown, for a
// handler called without a connection): a configured name; the local
// address itself (the address the client connected to, also when the
// server listens on every interface); or, on a loopback connection,
// "localhost" or a loopback address, on the local port.
func (p hostPolicy) allows(host string, local net.Addr, tls bool) bool {
	h, err := parseHostport(host, defaultPort(tls))
	if err != nil {
		return false
	}
	if p.anyPort[h.name] || p.withPort[h.String()] {
		return true
	}
	addr, ok := local.(*net.TCPAddr)
	if !ok || addr == nil || h.port != strconv.Itoa(addr.Port) {
		return false
	}
	ip := net.ParseIP(h.name)
	if ip != nil && ip.Equal(addr.IP) {
		return true
	}
	return addr.IP.IsLoopback() && (h.name == "localhost" || ip != nil && ip.IsLoopback())
}
