package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// systemReadPaths are what every confined command may read and execute:
// the system's programs, libraries and configuration, /proc (Landlock keeps
// a command from the files of processes outside its sandbox, such as
// /proc/PID/environ, mem or fd) and the harmless devices. Paths missing on
// this system are skipped by the helper.
func systemReadPaths() []string {
	return []string{
		"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
		"/run/systemd/resolve", // /etc/resolv.conf points there on systemd hosts
		"/proc",
		"/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	}
}

// hiddenPaths are files under the readable system directories that hold
// secrets, which root could otherwise read: password hashes, host keys,
// TLS private keys, sudo rules, stored network credentials. A pattern
// may have wildcards (filepath.Match) in its last element.
func hiddenPaths() []string {
	return []string{
		"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
		"/etc/ssh/ssh_host_*_key", "/etc/ssl/private", "/etc/sudoers", "/etc/sudoers.d",
		"/etc/security/opasswd", "/etc/krb5.keytab", "/etc/NetworkManager/system-connections",
		"/etc/wireguard", "/etc/ipsec.secrets", "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets",
		"/etc/credstore", "/etc/credstore.encrypted",
	}
}

// readRules splits readable paths around the hidden ones: a path with no
// hidden path beneath it is readable whole; a directory with some is only
// listable, and its entries are split in turn; a hidden path, or a symbolic
// link to one, is left out. A directory that cannot be listed is left out.
func readRules(paths, hidden []string) (read, list []string) {
	var split func(p string)
	split = func(p string) {
		if isHidden(p, hidden) {
			return
		}
		if !hasHiddenBeneath(p, hidden) {
			read = append(read, p)
			return
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return
		}
		list = append(list, p)
		for _, e := range entries {
			child := filepath.Join(p, e.Name())
			if e.Type()&fs.ModeSymlink != 0 {
				if real, err := filepath.EvalSymlinks(child); err == nil && (isHidden(real, hidden) || hasHiddenBeneath(real, hidden)) {
					continue
				}
			}
			split(child)
		}
	}
	for _, p := range paths {
		split(filepath.Clean(p))
	}
	return read, list
}

// isHidden reports whether p matches a hidden pattern or lies beneath one.
func isHidden(p string, hidden []string) bool {
	for _, h := range hidden {
		for q := p; ; q = filepath.Dir(q) {
			if ok, _ := filepath.Match(h, q); ok {
				return true
			}
			if q == "/" || q == "." {
				break
			}
		}
	}
	return false
}

// hasHiddenBeneath reports whether a hidden pattern names something
// strictly beneath directory p.
func hasHiddenBeneath(p string, hidden []string) bool {
	prefix := strings.TrimSuffix(p, "/") + "/"
	for _, h := range hidden {
		if strings.HasPrefix(h, prefix) {
			return true
		}
	}
	return false
}

// findGOROOT returns the root of the Go toolchain the go command on PATH
// belongs to, so that `go build` works in a confined command; "" when
// there is none.
func findGOROOT() string {
	bin, err := exec.LookPath("go")
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return ""
	}
	root := filepath.Dir(filepath.Dir(real))
	if fi, err := os.Stat(filepath.Join(root, "src", "runtime")); err != nil || !fi.IsDir() {
		return ""
	}
	return root
}

// privateDir is a command's own directory: its HOME and TMPDIR.
type privateDir struct{ root string }

// newPrivateDir creates a private directory, readable by its owner only,
// under the system's temporary directory.
func newPrivateDir() (privateDir, error) {
	root, err := os.MkdirTemp("", "agcore-sandbox-")
	if err != nil {
		return privateDir{}, fmt.Errorf("sandbox: private directory: %w", err)
	}
	d := privateDir{root: root}
	for _, sub := range []string{d.home(), d.tmp()} {
		if err := os.Mkdir(sub, 0o700); err != nil {
			_ = os.RemoveAll(root)
			return privateDir{}, fmt.Errorf("sandbox: private directory: %w", err)
		}
	}
	return d, nil
}

// home is the command's HOME.
func (d privateDir) home() string { return filepath.Join(d.root, "home") }

// tmp is the command's TMPDIR.
func (d privateDir) tmp() string { return filepath.Join(d.root, "tmp") }

// remove deletes the directory, making its read-only directories (a Go
// module cache has them) writable first when that is needed.
func (d privateDir) remove() error {
	if err := os.RemoveAll(d.root); err == nil {
		return nil
	}
	_ = filepath.WalkDir(d.root, func(path string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			_ = os.Chmod(path, 0o700)
		}
		return nil
	})
	return os.RemoveAll(d.root)
}
