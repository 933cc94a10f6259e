package providers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/agcore/agcore/providers"
)

func TestKindForStatus(t *testing.T) {
	tests := []struct {
		status int
		detail string
		want   providers.Kind
	}{
		{401, "", providers.KindAuthentication},
		{403, "forbidden", providers.KindAuthentication},
		{404, "", providers.KindNotFound},
		{400, "model_not_found", providers.KindNotFound},
		{400, "context_length_exceeded", providers.KindContextLength},
		{400, "invalid_request_error", providers.KindBadRequest},
		{408, "", providers.KindTimeout},
		{422, "", providers.KindBadRequest},
		{429, "", providers.KindRateLimited},
		{500, "", providers.KindServer},
		{503, "", providers.KindServer},
		{302, "", providers.KindOther},
		{0, "", providers.KindOther},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d_%s", tt.status, tt.detail), func(t *testing.T) {
			if got := providers.KindForStatus(tt.status, tt.detail); got != tt.want {
				t.Errorf("KindForStatus(%d, %q) = %v, want %v", tt.status, tt.detail, got, tt.want)
			}
		})
	}
}

func TestKind_Retryable(t *testing.T) {
	want := map[providers.Kind]bool{
		providers.KindOther:          false,
		providers.KindAuthentication: false,
		providers.KindNotFound:       false,
		providers.KindContextLength:  false,
		providers.KindRateLimited:    true,
		providers.KindServer:         true,
		providers.KindTimeout:        true,
		providers.KindBadRequest:     false,
		providers.KindCanceled:       false,
		providers.KindUnavailable:    true,
	}
	for k, w := range want {
		if got := k.Retryable(); got != w {
			t.Errorf("%v.Retryable() = %v, want %v", k, got, w)
		}
		if got := (&providers.Error{Kind: k}).Retryable(); got != w {
			t.Errorf("Error{%v}.Retryable() = %v, want %v", k, got, w)
		}
	}
	if got := providers.Kind(99).String(); got != "kind(99)" {
		t.Errorf("unknown kind String() = %q", got)
	}
}

func TestKindOf(t *testing.T) {
	rate := &providers.Error{Kind: providers.KindRateLimited, Status: 429, RetryAfter: 2 * time.Second}
	tests := []struct {
		name      string
		err       error
		kind      providers.Kind
		retryable bool
		after     time.Duration
	}{
		{"nil", nil, providers.KindOther, false, 0},
		{"plain", io.EOF, providers.KindOther, false, 0},
		{"provider error", rate, providers.KindRateLimited, true, 2 * time.Second},
		{"wrapped", fmt.Errorf("turn 3: %w", rate), providers.KindRateLimited, true, 2 * time.Second},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), providers.KindTimeout, true, 0},
		{"canceled", context.Canceled, providers.KindCanceled, false, 0},
		{"error wins over ctx", &providers.Error{Kind: providers.KindServer, Err: context.Canceled}, providers.KindServer, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := providers.KindOf(tt.err); got != tt.kind {
				t.Errorf("KindOf = %v, want %v", got, tt.kind)
			}
			if got := providers.IsRetryable(tt.err); got != tt.retryable {
				t.Errorf("IsRetryable = %v, want %v", got, tt.retryable)
			}
			if got := providers.RetryAfterOf(tt.err); got != tt.after {
				t.Errorf("RetryAfterOf = %v, want %v", got, tt.after)
			}
		})
	}
}

func TestError_ErrorAndUnwrap(t *testing.T) {
	cause := errors.New("connection reset by peer")
	tests := []struct {
		err  *providers.Error
		want string
	}{
		{&providers.Error{Provider: "openai", Kind: providers.KindRateLimited, Status: 429, RetryAfter: 2 * time.Second, Message: "slow down"},
			"openai: rate limited (status 429, retry after 2s): slow down"},
		{&providers.Error{Provider: "openai", Kind: providers.KindTimeout, Err: cause},
			"openai: timeout: connection reset by peer"},
		{&providers.Error{Kind: providers.KindServer, Status: 502, Message: "bad gateway", Err: errors.New("bad gateway")},
			"server error (status 502): bad gateway"},
		{&providers.Error{Kind: providers.KindRateLimited, RetryAfter: time.Second},
			"rate limited (retry after 1s)"},
		{&providers.Error{Provider: "openai", Kind: providers.KindUnavailable, Message: "connection refused: nothing is listening at http://127.0.0.1:1/v1"},
			"openai: unavailable: connection refused: nothing is listening at http://127.0.0.1:1/v1"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	wrapped := fmt.Errorf("call: %w", &providers.Error{Kind: providers.KindTimeout, Err: cause})
	if !errors.Is(wrapped, cause) {
		t.Error("errors.Is does not reach the cause through *Error")
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 120 * time.Second, true},
		{" 3 ", 3 * time.Second, true},
		{"0", 0, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"Sat, 01 Mar 2025 12:00:07 GMT", 7 * time.Second, true},
		{"Saturday, 01-Mar-25 12:01:00 GMT", time.Minute, true},
		{"Sat, 01 Mar 2025 11:00:00 GMT", 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"soon", 0, false},
		{"1e300", time.Duration(1<<63 - 1), true},
	}
	for _, tt := range tests {
		got, ok := providers.ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzParseRetryAfter checks that any header value parses to a
// non-negative wait, or is rejected, without panicking.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "1.5", "Sat, 01 Mar 2025 12:00:07 GMT", "-3", "1e400", ""} {
		f.Add(s)
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := providers.ParseRetryAfter(v, now)
		if d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, negative", v, d)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v, false; want 0 when rejected", v, d)
		}
	})
}
