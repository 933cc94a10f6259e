package builtin

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/sandbox"
)

// requireConfined skips the test where this host cannot confine commands.
func requireConfined(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(context.Background()); !st.Confined {
		t.Skipf("Landlock is unavailable here, confinement cannot be tested: %s", st)
	}
}

// confinedWorkspace returns a call context whose workspace is "ws" in a
// fresh directory, the workspace, and the directory around it, which holds
// secret.txt.
func confinedWorkspace(t *testing.T) (tc *toolsys.Context, root, outside string) {
	t.Helper()
	outside = t.TempDir()
	root = filepath.Join(outside, "ws")
	writeFiles(t, outside, map[string]string{"secret.txt": "TOP-SECRET\n", "ws/README": "hello\n"})
	ws, err := toolsys.NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	return &toolsys.Context{Workspace: ws}, ws.Root(), outside
}

func TestBash_ConfinedAttacksFail(t *testing.T) {
	requireConfined(t)
	home := t.TempDir()
	writeFiles(t, home, map[string]string{".ssh/id_rsa": "PRIVATE-KEY\n"})
	t.Setenv("HOME", home)
	tests := []struct {
		name    string
		command string
		absent  string // a path, relative to the directory around the workspace, that must not exist after
	}{
		{name: "read outside", command: "cat ../secret.txt"},
		{name: "read outside by absolute path", command: `cat "$(dirname "$PWD")/secret.txt"`},
		{name: "write outside", command: "echo pwned > ../out.txt", absent: "out.txt"},
		{name: "create a directory outside", command: "mkdir ../made", absent: "made"},
		{name: "hard link to a file outside", command: "ln ../secret.txt hl && cat hl", absent: "ws/hl"},
		{name: "symbolic link to a file outside", command: "ln -s ../secret.txt sl; cat sl"},
		{name: "move a file outside", command: "mv README ../README", absent: "README"},
		{name: "truncate a file outside", command: "truncate -s 0 ../secret.txt"},
		{name: "overwrite a file outside", command: "echo x > ../secret.txt"},
		{name: "read ~/.ssh", command: "cat " + filepath.Join(home, ".ssh/id_rsa")},
		{name: "list ~/.ssh", command: "ls " + filepath.Join(home, ".ssh")},
		{name: "read the agent's environment", command: "cat /proc/$PPID/environ"},
		{name: "read /etc/shadow", command: "cat /etc/shadow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc, _, outside := confinedWorkspace(t)
			r, err := NewBash(Options{}, nil).Execute(context.Background(), BashParams{Command: tt.command}, tc)
			r = mustFail(t, r, err)
			for _, secret := range []string{"TOP-SECRET", "PRIVATE-KEY", "PATH="} {
				if strings.Contains(r.Content, secret) {
					t.Fatalf("output shows %q:\n%s", secret, r.Content)
				}
			}
			if got := readFile(t, outside, "secret.txt"); got != "TOP-SECRET\n" {
				t.Fatalf("secret.txt changed to %q", got)
			}
			if tt.absent != "" {
				if _, err := os.Lstat(filepath.Join(outside, tt.absent)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s exists after the command (stat: %v); output:\n%s", tt.absent, err, r.Content)
				}
			}
		})
	}
}

func TestBash_BackgroundCommandIsConfined(t *testing.T) {
	requireConfined(t)
	tc, _, outside := confinedWorkspace(t)
	pm := newManager(t, ProcessOptions{})
	p := startBackground(t, pm, tc, "cat ../secret.txt; echo x > ../bg.txt")
	if err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	out, _ := p.ReadNew()
	if strings.Contains(out, "TOP-SECRET") || !strings.Contains(out, "Permission denied") {
		t.Fatalf("output %q", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "bg.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("bg.txt was written outside the workspace (stat: %v)", err)
	}
}

// listen returns a TCP listener on 127.0.0.1 and its port.
func listen(t *testing.T) (*net.TCPListener, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln.(*net.TCPListener), ln.Addr().(*net.TCPAddr).Port
}

// pending returns the connection the listener has queued, or nil when
// there is none: a connect that succeeded is queued before anyone accepts,
// so a non-blocking accept tells.
func pending(t *testing.T, ln *net.TCPListener) net.Conn {
	t.Helper()
	rc, err := ln.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	nfd := -1
	var aerr error
	if err := rc.Control(func(fd uintptr) { nfd, _, aerr = unix.Accept4(int(fd), unix.SOCK_CLOEXEC) }); err != nil {
		t.Fatal(err)
	}
	if errors.Is(aerr, unix.EAGAIN) {
		return nil
	}
	if aerr != nil {
		t.Fatalf("accept: %v", aerr)
	}
	f := os.NewFile(uintptr(nfd), "accepted")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestBash_ConnectDeniedUnlessPortAllowed(t *testing.T) {
	requireConfined(t)
	tc, _, _ := confinedWorkspace(t)
	ln, port := listen(t)
	command := "exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(port) + " && echo hello >&3"

	r, err := NewBash(Options{}, nil).Execute(context.Background(), BashParams{Command: command}, tc)
	r = mustFail(t, r, err)
	if !strings.Contains(r.Content, "Permission denied") {
		t.Errorf("content %q", r.Content)
	}
	if c := pending(t, ln); c != nil {
		t.Fatal("the listener got a connection from a sandbox that allows no port")
	}

	other := sandbox.New(sandbox.Config{AllowPorts: []int{port + 1}})
	r, err = NewBash(Options{Sandbox: other}, nil).Execute(context.Background(), BashParams{Command: command}, tc)
	mustFail(t, r, err)
	if c := pending(t, ln); c != nil {
		t.Fatal("the listener got a connection from a sandbox that allows another port")
	}

	allowed := sandbox.New(sandbox.Config{AllowPorts: []int{port}})
	r, err = NewBash(Options{Sandbox: allowed}, nil).Execute(context.Background(), BashParams{Command: command}, tc)
	mustOK(t, r, err)
	c := pending(t, ln)
	if c == nil {
		t.Fatal("no connection from a sandbox that allows the port")
	}
	if err := c.SetReadDeadline(time.Now().Add(guard)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, _ := c.Read(buf)
	if string(buf[:n]) != "hello\n" {
		t.Fatalf("read %q", buf[:n])
	}
}

func TestBash_ConfinedNormalWork(t *testing.T) {
	requireConfined(t)
	tc, root, _ := confinedWorkspace(t)
	r, err := NewBash(Options{}, nil).Execute(context.Background(), BashParams{
		Command: `mkdir -p src && echo 'one' > src/a.txt && mv src/a.txt b.txt && ln b.txt c.txt && ` +
			`cat README b.txt && cat <(echo substituted) && t=$(mktemp) && echo tmp > "$t" && cat "$t" && ` +
			`echo "$HOME" > home.txt && rm c.txt`,
	}, tc)
	r = mustOK(t, r, err)
	if r.Content != "hello\none\nsubstituted\ntmp\n" {
		t.Fatalf("content %q", r.Content)
	}
	if got := readFile(t, root, "b.txt"); got != "one\n" {
		t.Fatalf("b.txt = %q", got)
	}
	home := strings.TrimSpace(readFile(t, root, "home.txt"))
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the private HOME %s is left after the command (stat: %v)", home, err)
	}
}

func TestBash_ConfinedToolchains(t *testing.T) {
	requireConfined(t)
	tests := []struct {
		name    string
		needs   []string
		command string
		want    string
	}{
		{name: "git", needs: []string{"git"}, want: "init\n",
			command: "git init -q repo && cd repo && echo x > x && git add x && " +
				"git -c user.name=agent -c user.email=agent@example.com commit -qm init && git log --format=%s"},
		{name: "make", needs: []string{"make"}, want: "made\n",
			command: `printf 'all:\n\t@echo made\n' > Makefile && make`},
		{name: "gcc", needs: []string{"gcc"}, want: "compiled\n",
			command: `printf '#include <stdio.h>\nint main(void){puts("compiled");return 0;}\n' > c.c && gcc -o c c.c && ./c`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range tt.needs {
				if _, err := exec.LookPath(n); err != nil {
					t.Skipf("%s is not installed", n)
				}
			}
			tc, _, _ := confinedWorkspace(t)
			r, err := NewBash(Options{}, nil).Execute(context.Background(), BashParams{Command: tt.command, TimeoutSeconds: 120}, tc)
			r = mustOK(t, r, err)
			if r.Content != tt.want {
				t.Fatalf("content %q, want %q", r.Content, tt.want)
			}
		})
	}
}

func TestBash_ConfinedGoBuild(t *testing.T) {
	requireConfined(t)
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	out, err := exec.Command(gobin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	cache := strings.TrimSpace(string(out))
	tc, root, _ := confinedWorkspace(t)
	writeFiles(t, root, map[string]string{
		"hello/go.mod":       "module example.com/hello\n\ngo 1.21\n",
		"hello/main.go":      "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from go\") }\n",
		"hello/main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {}\n",
	})
	// The operator shares the build cache (ExtraWritePaths and Env); the
	// call keeps GOPATH in the workspace.
	sb := sandbox.New(sandbox.Config{ExtraWritePaths: []string{cache}, Env: []string{"GOCACHE=" + cache, "GOTOOLCHAIN=local"}})
	r, err := NewBash(Options{Sandbox: sb}, nil).Execute(context.Background(), BashParams{
		Command:        "cd hello && go build -o hello . && ./hello && go test -count=1 . | cut -f1",
		Env:            map[string]string{"GOPATH": filepath.Join(root, "gopath"), "GOFLAGS": "-mod=mod"},
		TimeoutSeconds: 600,
	}, tc)
	r = mustOK(t, r, err)
	if r.Content != "hello from go\nok  \n" {
		t.Fatalf("content %q", r.Content)
	}
}

// unhookedExe is a helper program that does not call sandbox.Main, as in a
// program that forgot to install the hook.
func unhookedExe(t *testing.T) string {
	t.Helper()
	exe, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true program to stand for a program without the hook")
	}
	return exe
}

func TestBash_RefusedWhenUnconfinable(t *testing.T) {
	sb := sandbox.New(sandbox.Config{Executable: unhookedExe(t)})
	tc, root, _ := confinedWorkspace(t)
	bash := NewBash(Options{Sandbox: sb}, NewProcessManager(ProcessOptions{}))
	if d := bash.Description(); !strings.Contains(d, "unconfined") || !strings.Contains(d, "refused") {
		t.Errorf("description does not say commands are unconfined and refused: %q", d)
	}
	for _, bg := range []bool{false, true} {
		r, err := bash.Execute(context.Background(), BashParams{Command: "touch ran", RunInBackground: bg}, tc)
		r = mustFail(t, r, err)
		for _, want := range []string{"cannot be confined", "does not call sandbox.Main", "sandbox.mode", "warn"} {
			if !strings.Contains(r.Content, want) {
				t.Errorf("background=%v: content %q does not contain %q", bg, r.Content, want)
			}
		}
		if _, err := os.Stat(filepath.Join(root, "ran")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("background=%v: the refused command ran", bg)
		}
	}
	r, err := NewBashProcess(Options{Sandbox: sb}, NewProcessManager(ProcessOptions{})).
		Execute(context.Background(), BashProcessParams{List: true}, tc)
	if r = mustFail(t, r, err); !strings.Contains(r.Content, "sandbox.mode") {
		t.Errorf("bash_process: %q", r.Content)
	}
}

func TestBash_WarnRunsUnconfined(t *testing.T) {
	var logs strings.Builder
	sb := sandbox.New(sandbox.Config{Mode: sandbox.Warn, Executable: unhookedExe(t), Logger: zerolog.New(&logs)})
	tc, _, _ := confinedWorkspace(t)
	bash := NewBash(Options{Sandbox: sb}, nil)
	if d := bash.Description(); !strings.Contains(d, "unconfined") || strings.Contains(d, "refused") {
		t.Errorf("description %q", d)
	}
	for range 2 {
		r, err := bash.Execute(context.Background(), BashParams{Command: "cat ../secret.txt"}, tc)
		if r = mustOK(t, r, err); r.Content != "TOP-SECRET\n" {
			t.Fatalf("content %q", r.Content)
		}
	}
	if n := strings.Count(logs.String(), "unconfined"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, logs.String())
	}
}

func TestBash_DescriptionSaysConfined(t *testing.T) {
	requireConfined(t)
	d := NewBash(Options{Sandbox: sandbox.New(sandbox.Config{AllowPorts: []int{443, 80}})}, nil).Description()
	for _, want := range []string{"confined (Landlock sandbox)", "port 443, 80 only"} {
		if !strings.Contains(d, want) {
			t.Errorf("description %q does not contain %q", d, want)
		}
	}
	if d := NewBash(Options{}, nil).Description(); !strings.Contains(d, "cannot open network connections") {
		t.Errorf("description %q", d)
	}
}
