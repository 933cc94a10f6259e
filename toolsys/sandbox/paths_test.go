package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadRules_SplitAroundHidden(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"etc/passwd", "etc/shadow", "etc/ssh/ssh_config", "etc/ssh/ssh_host_rsa_key",
		"etc/ssh/ssh_host_rsa_key.pub", "etc/ssl/certs/ca.pem", "etc/ssl/private/server.key", "usr/bin/sh"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A link to a hidden file must not grant it back.
	if err := os.Symlink("shadow", filepath.Join(root, "etc", "shadow.link")); err != nil {
		t.Fatal(err)
	}
	hidden := []string{root + "/etc/shadow", root + "/etc/ssh/ssh_host_*_key", root + "/etc/ssl/private"}
	read, list := readRules([]string{root + "/etc", root + "/usr", root + "/missing"}, hidden)
	rel := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = strings.TrimPrefix(p, root)
		}
		slices.Sort(out)
		return out
	}
	wantRead := []string{"/etc/passwd", "/etc/ssh/ssh_config", "/etc/ssh/ssh_host_rsa_key.pub", "/etc/ssl/certs", "/missing", "/usr"}
	if diff := cmp.Diff(wantRead, rel(read)); diff != "" {
		t.Errorf("readable (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/etc", "/etc/ssh", "/etc/ssl"}, rel(list)); diff != "" {
		t.Errorf("listable (-want +got):\n%s", diff)
	}
}

func TestIsHidden(t *testing.T) {
	hidden := []string{"/etc/shadow", "/etc/ssh/ssh_host_*_key", "/etc/ssl/private"}
	for p, want := range map[string]bool{
		"/etc/shadow": true, "/etc/shadow.bak": false, "/etc/ssh/ssh_host_ed25519_key": true,
		"/etc/ssh/ssh_host_ed25519_key.pub": false, "/etc/ssl/private/a/b.key": true, "/etc": false, "/": false,
	} {
		if got := isHidden(p, hidden); got != want {
			t.Errorf("isHidden(%q) = %v", p, got)
		}
	}
}

func TestFilterPath(t *testing.T) {
	env := []string{"HOME=/root", "PATH=/root/.cargo/bin:/usr/local/go/bin:bin::/usr/bin:/opt/tools/bin:/usrx/bin", "LANG=C"}
	got := filterPath(env, []string{"/usr", "/opt/tools"})
	want := []string{"HOME=/root", "PATH=/usr/local/go/bin:bin::/usr/bin:/opt/tools/bin", "LANG=C"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("env (-want +got):\n%s", diff)
	}
	if env[1] != "PATH=/root/.cargo/bin:/usr/local/go/bin:bin::/usr/bin:/opt/tools/bin:/usrx/bin" {
		t.Fatal("filterPath changed its argument")
	}
	if got := filterPath([]string{"A=1"}, nil); !slices.Equal(got, []string{"A=1"}) {
		t.Fatalf("without PATH: %q", got)
	}
}

func TestSetEnv(t *testing.T) {
	got := setEnv([]string{"HOME=/a", "X=1", "HOME=/b", "HOMEDIR=/c"}, "HOME", "/p")
	if diff := cmp.Diff([]string{"X=1", "HOMEDIR=/c", "HOME=/p"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestPrivateDir_RemoveReadOnlyTree(t *testing.T) {
	d, err := newPrivateDir()
	if err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(d.tmp(), "mod", "pkg")
	if err := os.MkdirAll(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ro, "f.go"), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ro, filepath.Dir(ro)} {
		if err := os.Chmod(p, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.root); !os.IsNotExist(err) {
		t.Fatalf("%s still exists (stat: %v)", d.root, err)
	}
}
