package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/toolsys/sandbox"
)

// requireConfined skips the test where this host cannot confine commands.
func requireConfined(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(context.Background()); !st.Confined {
		t.Skipf("Landlock is unavailable here, confinement cannot be tested: %s", st)
	}
}

// run runs script with bash under s in workspace ws with env, and returns
// its combined output and exit error.
func run(t *testing.T, s *sandbox.Sandbox, ws, script string, env ...string) (string, error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	cmd := exec.Command(bash, "-c", script)
	cmd.Dir = ws
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	release, err := s.Start(context.Background(), cmd, ws)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	err = cmd.Wait()
	release()
	return out.String(), err
}

func TestProbe_Confined(t *testing.T) {
	requireConfined(t)
	st := sandbox.Probe(context.Background())
	if st.ABI < sandbox.MinABI || st.Reason != "" {
		t.Fatalf("status %+v", st)
	}
	if want := fmt.Sprintf("confined (landlock ABI %d)", st.ABI); st.String() != want {
		t.Fatalf("String() = %q, want %q", st.String(), want)
	}
}

func TestStatus_Unconfined(t *testing.T) {
	dir := t.TempDir()
	hang := filepath.Join(dir, "hang")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	trueExe, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true program")
	}
	tests := []struct {
		name string
		cfg  sandbox.Config
		want string
	}{
		{name: "hook not installed", cfg: sandbox.Config{Executable: trueExe}, want: trueExe + " does not call sandbox.Main first thing in main"},
		{name: "helper hangs", cfg: sandbox.Config{Executable: hang, StartTimeout: 200 * time.Millisecond}, want: "did not answer within 200ms"},
		{name: "missing helper", cfg: sandbox.Config{Executable: filepath.Join(dir, "nothing")}, want: "start the helper"},
		{name: "invalid config", cfg: sandbox.Config{AllowPorts: []int{0}}, want: "sandbox: AllowPorts[0]: 0 is not a TCP port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := sandbox.New(tt.cfg).Status(context.Background())
			if st.Confined || st.ABI != 0 || !strings.Contains(st.Reason, tt.want) {
				t.Fatalf("status %+v, want unconfined because %q", st, tt.want)
			}
			if !strings.HasPrefix(st.String(), "unconfined: ") {
				t.Fatalf("String() = %q", st.String())
			}
		})
	}
}

func TestCheck_Modes(t *testing.T) {
	trueExe, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true program")
	}
	refuse := sandbox.New(sandbox.Config{Executable: trueExe})
	_, err = refuse.Check(context.Background())
	var ue *sandbox.UnavailableError
	if !errors.Is(err, sandbox.ErrUnconfined) || !errors.As(err, &ue) || !strings.Contains(ue.Reason, "sandbox.Main") {
		t.Fatalf("Refuse: Check = %v", err)
	}
	for _, want := range []string{"cannot be confined", "sandbox.mode", "warn", "sandbox.Config.Mode = sandbox.Warn"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	cmd := exec.Command(trueExe)
	if _, err := refuse.Start(context.Background(), cmd, ""); !errors.Is(err, sandbox.ErrUnconfined) || cmd.Process != nil {
		t.Fatalf("Start on an unconfined host = %v (process %v)", err, cmd.Process)
	}

	var logs bytes.Buffer
	warn := sandbox.New(sandbox.Config{Mode: sandbox.Warn, Executable: trueExe, Logger: zerolog.New(&logs)})
	for range 3 {
		st, err := warn.Check(context.Background())
		if err != nil || st.Confined {
			t.Fatalf("Warn: Check = %+v, %v", st, err)
		}
	}
	if n := strings.Count(logs.String(), `"level":"warn"`); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, logs.String())
	}
	// Starting confined stays impossible in Warn mode: the caller runs
	// the command itself.
	if _, err := warn.Start(context.Background(), exec.Command(trueExe), ""); !errors.Is(err, sandbox.ErrUnconfined) {
		t.Fatalf("Warn: Start = %v", err)
	}
}

func TestStatus_CancelledProbeIsNotKept(t *testing.T) {
	requireConfined(t)
	s := sandbox.New(sandbox.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Check(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Check with a cancelled context = %v", err)
	}
	if st := s.Status(context.Background()); !st.Confined {
		t.Fatalf("after a cancelled probe: %v", st)
	}
}

func TestStart_Environment(t *testing.T) {
	requireConfined(t)
	ws := t.TempDir()
	home := t.TempDir()
	s := sandbox.New(sandbox.Config{Env: []string{"GOCACHE=/var/cache/go", "SHARED=config", "GOFLAGS=-mod=mod"}})
	out, err := run(t, s, ws,
		`echo "$HOME"; echo "$TMPDIR"; echo "$PATH"; echo "$PWD"; touch "$HOME/h" "$TMPDIR/t"; echo "$GOCACHE $SHARED $GOFLAGS"`,
		"HOME="+home, "TMPDIR=/tmp", "PATH="+home+"/bin:/usr/bin:/bin", "SHARED=command")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("output %q", out)
	}
	if lines[4] != "/var/cache/go command -mod=mod" {
		t.Errorf("Config.Env under the command's environment: %q", lines[4])
	}
	priv := filepath.Dir(lines[0])
	if lines[0] == home || filepath.Dir(lines[1]) != priv || lines[1] == "/tmp" {
		t.Errorf("HOME %q and TMPDIR %q are not private", lines[0], lines[1])
	}
	if lines[2] != "/usr/bin:/bin" {
		t.Errorf("PATH %q keeps a directory commands cannot execute from", lines[2])
	}
	if lines[3] != ws {
		t.Errorf("PWD %q, want %q", lines[3], ws)
	}
	if _, err := os.Stat(priv); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the private directory %s is left after release (stat: %v)", priv, err)
	}
}

func TestStart_ProcessRestrictions(t *testing.T) {
	requireConfined(t)
	st := sandbox.Probe(context.Background())
	out, err := run(t, sandbox.New(sandbox.Config{}), t.TempDir(),
		`grep -E '^(NoNewPrivs|Seccomp|CapBnd|CapEff|CapInh|CapAmb):' /proc/self/status; kill -0 $PPID && echo signalled`)
	if err == nil && st.ABI >= 6 {
		t.Fatalf("signalling the parent worked with ABI %d: %s", st.ABI, out)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2", "CapInh:\t0000000000000000", "CapAmb:\t0000000000000000"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if os.Geteuid() == 0 {
		// Root keeps only CHOWN, DAC_OVERRIDE, FOWNER and FSETID.
		for _, want := range []string{"CapBnd:\t000000000000001b", "CapEff:\t000000000000001b"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in\n%s", want, out)
			}
		}
	} else if !strings.Contains(out, "CapEff:\t0000000000000000") {
		t.Errorf("capabilities left:\n%s", out)
	}
}

func TestStart_Network(t *testing.T) {
	requireConfined(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	// A UNIX socket outside the sandbox stands for the docker or systemd
	// socket.
	sock := filepath.Join(t.TempDir(), "daemon.sock")
	uln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer uln.Close()

	tests := []struct {
		name  string
		ports []int
		op    string
		want  string
	}{
		{name: "TCP connect", op: "tcp-connect:" + port, want: "permission denied"},
		{name: "Multipath TCP connect", op: "mptcp-connect:" + port, want: "protocol not supported"},
		{name: "TCP Fast Open", op: "tcp-fastopen:" + port, want: "operation not supported"},
		{name: "Multipath TCP to an allowed port", ports: []int{ln.Addr().(*net.TCPAddr).Port}, op: "mptcp-connect:" + port, want: "protocol not supported"},
		{name: "TCP connect to an allowed port", ports: []int{ln.Addr().(*net.TCPAddr).Port}, op: "tcp-connect:" + port, want: "ok"},
		{name: "TCP bind", ports: []int{ln.Addr().(*net.TCPAddr).Port}, op: "tcp-bind", want: "permission denied"},
		{name: "raw socket", op: "raw-socket", want: "operation not permitted"},
		{name: "UNIX socket outside", op: "unix-connect:" + sock, want: "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The test binary itself makes the system calls, so that
			// nothing depends on the tools installed.
			s := sandbox.New(sandbox.Config{AllowPorts: tt.ports, ExtraReadPaths: []string{exe}})
			out, err := run(t, s, t.TempDir(), `"$EXE"`, "EXE="+exe, "SANDBOX_TEST_OP="+tt.op)
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got := strings.TrimSpace(out); got != tt.want {
				t.Fatalf("%s: %q, want %q", tt.op, got, tt.want)
			}
		})
	}
}

func TestStart_Rejects(t *testing.T) {
	requireConfined(t)
	s := sandbox.New(sandbox.Config{})
	withFiles := exec.Command("/bin/sh", "-c", "true")
	withFiles.ExtraFiles = []*os.File{os.Stdin}
	relative := &exec.Cmd{Path: "sh", Args: []string{"sh"}}
	tests := []struct {
		name string
		cmd  *exec.Cmd
		ws   string
		want string
	}{
		{name: "extra files", cmd: withFiles, want: "cannot take ExtraFiles"},
		{name: "relative program", cmd: relative, want: `program "sh" is not an absolute path`},
		{name: "relative workspace", cmd: exec.Command("/bin/sh"), ws: "ws", want: `workspace "ws" is not an absolute path`},
		{name: "missing workspace", cmd: exec.Command("/bin/sh"), ws: filepath.Join(t.TempDir(), "gone"), want: "writable path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release, err := s.Start(context.Background(), tt.cmd, tt.ws)
			if err == nil {
				_ = tt.cmd.Wait()
				release()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestStart_InheritedDescriptorsAreClosed(t *testing.T) {
	requireConfined(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("TOP-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A descriptor this process inherited without close-on-exec, as from
	// a careless parent, leaks into every child os/exec starts.
	fd, err := syscall.Open(secret, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	out, err := run(t, sandbox.New(sandbox.Config{}), t.TempDir(), fmt.Sprintf("cat <&%d", fd))
	if err == nil || strings.Contains(out, "TOP-SECRET") {
		t.Fatalf("the command read a descriptor opened outside the sandbox: %v\n%s", err, out)
	}
}

// TestStatus_ProgramWithoutHookIsNotStarted builds a program that uses a
// Sandbox without calling Main: the Sandbox reports commands unconfined,
// naming the missing hook, and never re-executes the program, whose main
// might do anything with the helper's arguments.
func TestStatus_ProgramWithoutHookIsNotStarted(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	exe := filepath.Join(t.TempDir(), "nohook")
	if out, err := exec.Command(gobin, "build", "-o", exe, "./testdata/nohook").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	marker := exe + ".started"
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatalf("nohook: %v", err)
	}
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, "unconfined: ") || !strings.Contains(got, "does not call sandbox.Main") {
		t.Errorf("status = %q", got)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the program was started as a helper (%v)", err)
	}
}

// TestStart_FailedStartKillsTheGroup uses a helper that starts a child of
// its own and never answers: when the start fails (here, the probe's), the
// helper's whole process group is killed, the child included.
func TestStart_FailedStartKillsTheGroup(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	helper := filepath.Join(dir, "helper")
	script := "#!/bin/sh\nsleep 300 &\necho $! > " + pidFile + ".tmp\nmv " + pidFile + ".tmp " + pidFile + "\nexec sleep 300\n"
	if err := os.WriteFile(helper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := sandbox.New(sandbox.Config{Executable: helper, StartTimeout: 300 * time.Millisecond, Mode: sandbox.Warn})
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if _, err := s.Start(context.Background(), cmd, dir); err == nil {
		t.Fatal("Start succeeded with a helper that never answers")
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the helper's child did not start: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The child is ours only through the helper; once killed it is reaped
	// by init. The signal is sent when Start returns, and takes the child
	// a moment later: wait for its exit, which the helper's own sleep of 300
	// s would never give.
	if !exitsWithin(pid, 30*time.Second) {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		t.Errorf("the helper's child %d survived the failed start: %s", pid, st)
	}
}
