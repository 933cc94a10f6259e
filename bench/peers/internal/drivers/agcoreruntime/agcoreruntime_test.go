package agcoreruntime

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/scripted"
)

// startMock serves the workload's script and returns the API's base URL.
func startMock(t *testing.T) string {
	t.Helper()
	model, err := scripted.New(workload.Script(), scripted.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mockllm.Start(t.Context(), "127.0.0.1:0", mockllm.Config{Provider: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv.URL()
}

// TestVariants_Sessions runs 40 turns on one goroutine with each variant
// and counts the sessions each opened: one per turn, or one per
// TurnsPerSession turns.
func TestVariants_Sessions(t *testing.T) {
	url := startMock(t)
	tests := []struct {
		peer harness.Peer
		want uint64
	}{
		{Peer, 40},
		{ReusePeer, 3}, // 16 + 16 + 8 turns
		{DiskPeer, 3},
	}
	for _, tt := range tests {
		t.Run(tt.peer.Name, func(t *testing.T) {
			hd, err := tt.peer.New(t.Context(), harness.Env{BaseURL: url, HTTPClient: workload.HTTPClient(1)})
			if err != nil {
				t.Fatal(err)
			}
			d := hd.(*driver)
			for range 40 {
				if err := d.Turn(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if got := d.next.Load(); got != tt.want {
				t.Errorf("40 turns opened %d sessions, want %d", got, tt.want)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDiskPeer_JournalOnDisk checks that the disk variant journals into
// files of its data directory, and that Close removes the directory.
func TestDiskPeer_JournalOnDisk(t *testing.T) {
	url := startMock(t)
	hd, err := NewDisk(t.Context(), harness.Env{BaseURL: url, HTTPClient: workload.HTTPClient(1)})
	if err != nil {
		t.Fatal(err)
	}
	d := hd.(*driver)
	for range 3 {
		if err := d.Turn(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	var logBytes int64
	err = filepath.WalkDir(d.dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if filepath.Ext(path) == ".mem" || filepath.Ext(path) == ".vlog" {
			info, err := e.Info()
			if err != nil {
				return err
			}
			logBytes += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if logBytes == 0 {
		t.Errorf("no write-ahead log in %s after three turns", d.dir)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("data directory %s after Close: %v, want it removed", d.dir, err)
	}
}
