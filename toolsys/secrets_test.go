package toolsys

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestSubstituteSecrets(t *testing.T) {
	store := MapSecrets{"TOKEN": "tok-123456", "USER": "alice-admin"}
	params := []string{"command", "env"}
	tests := []struct {
		name, in, want string
		is             error
		field, secret  string
	}{
		{"no placeholder", `{"command":"ls"}`, `{"command":"ls"}`, nil, "", ""},
		{"in a declared string", `{"command":"curl -H <secret_ref:TOKEN> -u <secret_ref:USER>"}`, `{"command":"curl -H tok-123456 -u alice-admin"}`, nil, "", ""},
		{"under a declared param", `{"env":{"T":"<secret_ref:TOKEN>"},"command":"x"}`, `{"command":"x","env":{"T":"tok-123456"}}`, nil, "", ""},
		{"escaped placeholder", `{"command":"\u003csecret_ref:TOKEN>"}`, `{"command":"tok-123456"}`, nil, "", ""},
		{"in an undeclared param", `{"command":"x","path":"<secret_ref:TOKEN>"}`, "", ErrSecretNotAllowed, "path", ""},
		{"nested undeclared", `{"opts":{"list":["a","<secret_ref:TOKEN>"]}}`, "", ErrSecretNotAllowed, "opts.list[1]", ""},
		{"unknown secret", `{"command":"<secret_ref:NOPE>"}`, "", ErrUnknownSecret, "command", "NOPE"},
		{"malformed", `{"command":"<secret_ref:bad name>"}`, "", ErrMalformedSecretRef, "command", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, used, err := SubstituteSecrets(json.RawMessage(tt.in), params, store)
			if tt.is == nil {
				if err != nil {
					t.Fatal(err)
				}
				if string(out) != tt.want {
					t.Errorf("got %s, want %s", out, tt.want)
				}
				for name, v := range used {
					if store[name] != v {
						t.Errorf("used %s = %q", name, v)
					}
				}
				return
			}
			var se *SecretError
			if !errors.Is(err, tt.is) || !errors.As(err, &se) || se.Field != tt.field || se.Secret != tt.secret {
				t.Fatalf("err = %#v, want %v on field %q secret %q", err, tt.is, tt.field, tt.secret)
			}
			if strings.Contains(err.Error(), "tok-123456") || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error text %q leaks a value or omits the field", err)
			}
		})
	}
}

func TestEnvSecrets(t *testing.T) {
	t.Setenv("AGCORE_SECRET_API", "env-secret-value")
	t.Setenv("PLAIN_VAR", "not-a-secret")
	var s EnvSecrets
	if v, ok := s.Lookup("API"); !ok || v != "env-secret-value" {
		t.Errorf("Lookup(API) = %q, %v", v, ok)
	}
	if _, ok := s.Lookup("PLAIN_VAR"); ok {
		t.Error("the default prefix let a plain variable through")
	}
	if got := s.Secrets()["API"]; got != "env-secret-value" {
		t.Errorf("Secrets()[API] = %q", got)
	}
	custom := EnvSecrets{Prefix: "PLAIN_"}
	if v, ok := custom.Lookup("VAR"); !ok || v != "not-a-secret" {
		t.Errorf("custom prefix Lookup = %q, %v", v, ok)
	}
}

func FuzzSecretRefs(f *testing.F) {
	for _, s := range []string{"", "<secret_ref:A>", "x<secret_ref:A_b.c-1>y<secret_ref:B>", "<secret_ref:>", "<secret_ref:a b>", "<secret_ref:" + strings.Repeat("a", 200) + ">", "<secret_ref:A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		refs, err := ParseSecretRefs(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedSecretRef) {
				t.Fatalf("error %v is not ErrMalformedSecretRef", err)
			}
			return
		}
		last := 0
		var rebuilt strings.Builder
		for _, r := range refs {
			if r.Start < last || r.End > len(s) || s[r.Start:r.End] != SecretPlaceholder(r.Name) {
				t.Fatalf("bad ref %+v in %q", r, s)
			}
			rebuilt.WriteString(s[last:r.Start])
			rebuilt.WriteString(SecretPlaceholder(r.Name))
			last = r.End
		}
		rebuilt.WriteString(s[last:])
		if rebuilt.String() != s {
			t.Fatalf("refs do not tile the input")
		}
		if len(refs) == 0 && strings.Contains(s, secretRefOpen) {
			t.Fatalf("placeholder opening in %q went unnoticed", s)
		}
	})
}
