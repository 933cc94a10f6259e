package toolsys

import "testing"

func TestContext_HostAllowed(t *testing.T) {
	tests := []struct {
		allowed []string
		host    string
		want    bool
	}{
		{nil, "example.com", false},
		{[]string{"*"}, "anything.org", true},
		{[]string{"*"}, "", false},
		{[]string{"example.com"}, "example.com", true},
		{[]string{"example.com"}, "EXAMPLE.com.", true},
		{[]string{"example.com"}, "example.com:8443", true},
		{[]string{"example.com"}, "api.example.com", false},
		{[]string{"example.com"}, "badexample.com", false},
		{[]string{"*.example.com"}, "api.example.com", true},
		{[]string{"*.example.com"}, "a.b.example.com", true},
		{[]string{"*.example.com"}, "example.com", false},
		{[]string{"*.example.com"}, "evilexample.com", false},
		{[]string{"*.example.com"}, "example.com.evil.org", false},
		{[]string{"::1"}, "[::1]:80", true},
		{[]string{"other.org", "*.example.com"}, "x.example.com", true},
	}
	for _, tt := range tests {
		c := &Context{AllowedHosts: tt.allowed}
		if got := c.HostAllowed(tt.host); got != tt.want {
			t.Errorf("%v.HostAllowed(%q) = %v, want %v", tt.allowed, tt.host, got, tt.want)
		}
	}
	var nilCtx *Context
	if nilCtx.HostAllowed("example.com") {
		t.Error("a nil Context allowed a host")
	}
}

func TestPermission_StringParse(t *testing.T) {
	for _, p := range []Permission{PermNone, PermReadOnly, PermWrite, PermExecute} {
		got, err := ParsePermission(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePermission(%q) = %v, %v", p.String(), got, err)
		}
	}
	if _, err := ParsePermission("root"); err == nil {
		t.Error("ParsePermission(root) succeeded")
	}
}

func TestContext_ReportProgress(t *testing.T) {
	var nilCtx *Context
	nilCtx.ReportProgress(Progress{Progress: 1}) // no hook: dropped, no panic
	(&Context{}).ReportProgress(Progress{Progress: 1})

	var got []Progress
	c := &Context{Progress: func(p Progress) { got = append(got, p) }}
	c.ReportProgress(Progress{Progress: 1, Total: 4, Message: "one"})
	c.ReportProgress(Progress{Progress: 2, Total: 4})
	if len(got) != 2 || got[0] != (Progress{1, 4, "one"}) || got[1] != (Progress{2, 4, ""}) {
		t.Fatalf("reports = %+v, want the two reports in order", got)
	}
}
