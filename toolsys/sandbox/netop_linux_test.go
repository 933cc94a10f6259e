package sandbox_test

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// netOp tries one operation and returns "ok" or the error: "mptcp-connect:PORT"
// (a Multipath TCP socket to 127.0.0.1:PORT), "tcp-connect:PORT",
// "tcp-fastopen:PORT" (a TCP Fast Open sendto, which connects without
// connect), "tcp-bind" (on an ephemeral port), "raw-socket" or
// "unix-connect:PATH" (a UNIX socket listening at PATH).
func netOp(op string) string {
	name, arg, _ := strings.Cut(op, ":")
	port, _ := strconv.Atoi(arg)
	loopback := &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	var fd int
	var err error
	switch name {
	case "mptcp-connect":
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP); err == nil {
			err = unix.Connect(fd, loopback)
		}
	case "tcp-connect":
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0); err == nil {
			err = unix.Connect(fd, loopback)
		}
	case "tcp-fastopen":
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0); err == nil {
			err = unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, loopback)
		}
	case "tcp-bind":
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0); err == nil {
			err = unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
		}
	case "unix-connect":
		if fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0); err == nil {
			err = unix.Connect(fd, &unix.SockaddrUnix{Name: arg})
		}
	case "raw-socket":
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_TCP)
	default:
		return "unknown op " + op
	}
	if err != nil {
		return err.Error()
	}
	_ = unix.Close(fd)
	return "ok"
}
