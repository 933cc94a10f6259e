package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/agcore/agcore/internal/config"
	"github.com/agcore/agcore/internal/logging"
	"github.com/agcore/agcore/memory"
)

// newBackupCmd returns `agcore backup`.
func newBackupCmd(a *app) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Write a backup of the data directory, as of one moment",
		Long: `Write everything the data directory (--data-dir) holds (session journals,
session memory, knowledge pages) to standard output, or to --output, as one
file that agcore restore reads back. The backup is a copy of the store as of
one moment, and ends with its length and CRC-32C, so restore refuses a
truncated or altered file.

A data directory is open in one process at a time (Badger locks it; even a
reader must wait for a writer to close it). While agcore serve runs on it,
agcore backup asks the server for the backup through the UNIX socket the
server keeps in the data directory (agcore.sock, the directory owner's
alone), and the server copies its store while sessions keep running. A
program that embeds the runtime backs up its live store itself, with
Runtime.Backup.`,
		Example: `  agcore backup --data-dir /var/lib/agcore > agcore-$(date +%F).backup
  agcore backup --output agcore.backup`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.loadConfig(config.Overrides{})
			if err != nil {
				return err
			}
			if _, err := os.Stat(cfg.DataDir); err != nil {
				return fmt.Errorf("%w at %s (set --data-dir): %w", errNoDataDir, cfg.DataDir, err)
			}
			if output == "" && logging.IsTerminal(cmd.OutOrStdout()) {
				return &usageError{errors.New("a backup is binary: redirect standard output to a file, or set --output")}
			}
			var write func(io.Writer) (int64, error)
			store, err := openForCopy(cfg.DataDir, a.log)
			switch {
			case errors.Is(err, memory.ErrLocked):
				// Held by a running server: ask it.
				write = func(w io.Writer) (int64, error) { return backupThroughServer(cmd.Context(), cfg.DataDir, w) }
			case err != nil:
				return err
			default:
				defer store.Close()
				write = func(w io.Writer) (int64, error) {
					info, err := store.Backup(cmd.Context(), w)
					return info.Bytes, err
				}
			}
			n, werr := writeBackup(output, cmd.OutOrStdout(), write)
			if errors.Is(werr, os.ErrNotExist) && errors.Is(err, memory.ErrLocked) {
				return fmt.Errorf("%w: a data directory is open in one process at a time, and no agcore serve answered on its socket %s. "+
					"Back up a live store from the process that has it open, with Runtime.Backup, or stop it and run agcore backup again", err, controlSocket)
			}
			if werr != nil {
				return werr
			}
			where := output
			if where == "" {
				where = "standard output"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "agcore: backup of %s written to %s: %d bytes\n", cfg.DataDir, where, n)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "file to write (default: standard output); written under a temporary name and renamed when complete")
	return cmd
}

// openForCopy opens the store in dir to read it all: read-only, or for
// writing when its write-ahead log needs a replay first. A store in use by
// another process fails with an error wrapping memory.ErrLocked.
func openForCopy(dir string, log zerolog.Logger) (*memory.Store, error) {
	store, err := memory.Open(memory.Options{Dir: dir, ReadOnly: true, Logger: log})
	if errors.Is(err, memory.ErrNeedsReplay) {
		store, err = memory.Open(memory.Options{Dir: dir, Logger: log})
	}
	return store, err
}

// writeBackup has write produce the backup into the file output (through
// a temporary file renamed once complete and synced), or to stdout when
// output is empty, and returns its size.
func writeBackup(output string, stdout io.Writer, write func(io.Writer) (int64, error)) (int64, error) {
	if output == "" {
		return write(stdout)
	}
	tmp := output + ".partial"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, output)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return 0, err
	}
	return n, nil
}

// newRestoreCmd returns `agcore restore`.
func newRestoreCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "restore FILE",
		Short: "Restore a backup into an empty data directory",
		Long: `Restore a backup written by agcore backup (or Runtime.Backup) into the data
directory (--data-dir), which must be empty or absent: restore never writes
over a store. The whole file is checked against its length and CRC-32C
before anything is written, so a truncated or altered backup is refused and
the directory is left as it was. The restored store is then checked as
agcore doctor checks it; its sessions resume where the backup left them.`,
		Example: `  agcore restore agcore-2026-01-02.backup --data-dir /var/lib/agcore-restored
  agcore restore agcore.backup --data-dir ./data && agcore sessions list --data-dir ./data`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &usageError{fmt.Errorf("%s takes one backup file, got %d arguments", cmd.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.loadConfig(config.Overrides{})
			if err != nil {
				return err
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil {
				return err
			}
			if err := memory.Restore(cmd.Context(), f, info.Size(), memory.Options{Dir: cfg.DataDir, Logger: a.log}); err != nil {
				if errors.Is(err, memory.ErrNotEmpty) {
					return fmt.Errorf("%w; choose another --data-dir", err)
				}
				return err
			}
			rep, err := a.doctor(cmd.Context(), cfg.DataDir, false)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored %s into %s: %d sessions", args[0], cfg.DataDir, rep.Sessions)
			if rep.Knowledge != nil && rep.Knowledge.Pages > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), ", %d knowledge pages", rep.Knowledge.Pages)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			if len(rep.Damaged) > 0 {
				printDoctor(cmd.OutOrStdout(), termFor(cmd.OutOrStdout(), a.getenv), rep)
				return fmt.Errorf("%w: the backup holds %s (agcore doctor --repair sets them aside)", errDamaged, fmt.Sprintf("%d problem%s", len(rep.Damaged), plural(len(rep.Damaged))))
			}
			return nil
		},
	}
}
