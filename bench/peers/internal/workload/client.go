package workload

import (
	"net"
	"net/http"
	"time"
)

// HTTPClient returns the client every peer sends its requests with: one
// transport keeping enough idle connections to the mock for concurrency
// goroutines (Go's default of two per host would open and close
// connections all the time at 16), so that no peer pays for connection
// churn the others avoid. concurrency below 1 counts as 1.
func HTTPClient(concurrency int) *http.Client {
	idle := max(concurrency, 1) * 2
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        idle,
		MaxIdleConnsPerHost: idle,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}}
}
