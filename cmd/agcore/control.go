package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors"
)

// controlSocket is the name, in a data directory, of the UNIX socket
// through which a running agcore serve lets other agcore commands of the
// same user reach the store it holds open: a store is open in one process
// at a time. The socket is the data directory owner's alone (mode 0600 in
// a 0700 directory), and it answers one request, a backup.
const controlSocket = "agcore.sock"

// backupTrailer is the HTTP trailer of a backup sent over the control
// socket: "ok <bytes>" once the whole backup is written, else the error.
const backupTrailer = "Agcore-Backup"

// serveControl listens on the control socket of dataDir, whose store rt
// holds open, and answers GET /backup with rt.Backup. stop closes it and
// removes the socket. A socket left by a process that was killed is
// replaced: whoever holds the store's lock owns the name.
func serveControl(dataDir string, rt *actors.Runtime, log zerolog.Logger) (stop func(), err error) {
	path := filepath.Join(dataDir, controlSocket)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return func() {}, fmt.Errorf("control socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return func() {}, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return func() {}, fmt.Errorf("control socket %s: %w", path, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /backup", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Trailer", backupTrailer)
		info, err := rt.Backup(r.Context(), w)
		if err != nil {
			log.Error().Err(err).Msg("backup over the control socket failed")
			w.Header().Set(backupTrailer, "error: "+err.Error())
			return
		}
		log.Info().Int64("bytes", info.Bytes).Msg("backup sent over the control socket")
		w.Header().Set(backupTrailer, "ok "+strconv.FormatInt(info.Bytes, 10))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() {
		_ = srv.Close()
		_ = os.Remove(path)
	}, nil
}

// backupThroughServer asks the process that holds dataDir's store open
// for a backup through its control socket, and writes it to w. It fails
// with an error wrapping os.ErrNotExist when no process answers there.
func backupThroughServer(ctx context.Context, dataDir string, w io.Writer) (int64, error) {
	path := filepath.Join(dataDir, controlSocket)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://agcore/backup", nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("control socket %s: %w", path, errors.Join(err, os.ErrNotExist))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("control socket %s: %s", path, resp.Status)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("backup through the server: %w", err)
	}
	switch t := resp.Trailer.Get(backupTrailer); {
	case t == "ok "+strconv.FormatInt(n, 10):
		return n, nil
	case t == "":
		return n, errors.New("backup through the server: the server did not finish it")
	default:
		return n, fmt.Errorf("backup through the server: %s", t)
	}
}
