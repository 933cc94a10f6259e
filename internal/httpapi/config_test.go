package httpapi_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/httpapi"
)

func TestParseOrigin(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"https://console.example.com", "https://console.example.com"},
		{"HTTPS://Console.Example.COM:443/", "https://console.example.com"},
		{"http://127.0.0.1:5173", "http://127.0.0.1:5173"},
		{"http://localhost:80", "http://localhost"},
		{"http://[::1]:8080", "http://[::1]:8080"},
		{"https://console.example.com:8443", "https://console.example.com:8443"},
		{"*", ""},
		{"null", ""},
		{"https://*.example.com", ""},
		{"console.example.com", ""},
		{"ftp://console.example.com", ""},
		{"https://console.example.com/app", ""},
		{"https://user@console.example.com", ""},
		{"https://console.example.com?x=1", ""},
		{"https://console.example.com:0", ""},
		{"https://console.example.com:99999", ""},
		{"https://", ""},
		{"http://::1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := httpapi.ParseOrigin(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ParseOrigin(%q) = %q, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseOrigin(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseAllowedHost(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"agents.internal", "agents.internal"},
		{"Agents.Internal:8443", "agents.internal:8443"},
		{"10.0.0.5", "10.0.0.5"},
		{"[fd00::1]", "[fd00::1]"},
		{"[fd00::1]:8080", "[fd00::1]:8080"},
		{"http://agents.internal", ""},
		{"agents.internal/v1", ""},
		{"*.internal", ""},
		{"*", ""},
		{"", ""},
		{"fd00::1", ""},
		{"agents.internal:", ""},
		{"agents.internal:http", ""},
		{"agents internal", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := httpapi.ParseAllowedHost(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ParseAllowedHost(%q) = %q, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseAllowedHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestNew_InvalidConfig checks that New refuses a Config it cannot honour,
// with an error that names the field.
func TestNew_InvalidConfig(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript()})
	tests := []struct {
		name  string
		cfg   httpapi.Config
		field string
	}{
		{"no runtime", httpapi.Config{}, "Config.Runtime"},
		{"wildcard origin", httpapi.Config{Runtime: e.rt, CORSOrigins: []string{"https://ok.example", "*"}}, "Config.CORSOrigins[1]"},
		{"origin with a path", httpapi.Config{Runtime: e.rt, CORSOrigins: []string{"https://ok.example/app"}}, "Config.CORSOrigins[0]"},
		{"host with a scheme", httpapi.Config{Runtime: e.rt, AllowedHosts: []string{"http://agents.internal"}}, "Config.AllowedHosts[0]"},
		{"negative body timeout", httpapi.Config{Runtime: e.rt, BodyTimeout: -time.Second}, "Config.BodyTimeout"},
		{"negative header timeout", httpapi.Config{Runtime: e.rt, ReadHeaderTimeout: -time.Second}, "Config.ReadHeaderTimeout"},
		{"negative idle timeout", httpapi.Config{Runtime: e.rt, IdleTimeout: -time.Second}, "Config.IdleTimeout"},
		{"negative connection cap", httpapi.Config{Runtime: e.rt, MaxConnections: -1}, "Config.MaxConnections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := httpapi.New(tt.cfg)
			if !errors.Is(err, httpapi.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("New = %v, %v; want ErrInvalidConfig naming %s", srv, err, tt.field)
			}
		})
	}
}
