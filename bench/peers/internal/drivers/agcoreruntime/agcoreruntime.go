// Package agcoreruntime runs the workload through agcore's actor runtime:
// a turn submits the question to a session (an actor, activated from the
// journal) and reads the turn's result. The runtime streams every model
// call, runs the tool under its supervisor, and journals each step to
// Badger before it takes effect, which none of the other peers does at
// all.
//
// Three variants show what sessions and durability cost:
//
//   - Peer (agcore-runtime) opens a new session for every turn, with the
//     journal in an in-memory store (no fsync);
//   - ReusePeer (agcore-runtime-reuse) runs up to TurnsPerSession turns in
//     each session, as a chat does, with the journal in memory: a turn
//     activates no session, and its requests carry the conversation so far;
//   - DiskPeer (agcore-runtime-disk) is ReusePeer with the journal in a
//     data directory on disk, with batch durability: every step is on disk
//     (group-committed, fsynced) before the turn goes on.
package agcoreruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/bench/peers/internal/drivers/agcoreloop"
	"github.com/agcore/agcore/bench/peers/internal/harness"
	"github.com/agcore/agcore/bench/peers/internal/workload"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/openai"
)

// The names of the variants.
const (
	name      = "agcore-runtime"
	reuseName = "agcore-runtime-reuse"
	diskName  = "agcore-runtime-disk"
)

// The variants.
var (
	// Peer is agcore's actor runtime, a new session per turn.
	Peer = harness.Peer{Name: name, New: New}
	// ReusePeer is agcore's actor runtime, sessions reused for
	// TurnsPerSession turns.
	ReusePeer = harness.Peer{Name: reuseName, New: NewReuse}
	// DiskPeer is ReusePeer with the journal on disk, batch durability.
	DiskPeer = harness.Peer{Name: diskName, New: NewDisk}
)

// IdleTimeout is how long a finished session stays active before it is
// passivated, so that the memory of finished conversations is given back
// during the run instead of piling up.
const IdleTimeout = time.Second

// TurnsPerSession is how many turns a session of ReusePeer and DiskPeer
// runs before a new one replaces it, so that the conversation a request
// carries stays short (the same bound as the turn-overhead workload of
// agcore bench).
const TurnsPerSession = 16

// config says how a driver keeps its sessions and its journal.
type config struct {
	name string
	// turns is the number of turns a session runs; 1 opens a new session
	// per turn.
	turns int
	// onDisk keeps the journal in a temporary data directory with batch
	// durability, instead of an in-memory store.
	onDisk bool
}

type driver struct {
	cfg  config
	rt   *actors.Runtime
	dir  string // the data directory, removed by Close; "" in memory
	next atomic.Uint64

	mu   sync.Mutex
	free []*conversation // sessions between two turns
}

// conversation is a session and the turns it has run.
type conversation struct {
	s     *actors.Session
	turns int
}

// New returns the agcore-runtime driver: a new session per turn.
func New(ctx context.Context, env harness.Env) (harness.Driver, error) {
	return newDriver(ctx, env, config{name: name, turns: 1})
}

// NewReuse returns the agcore-runtime-reuse driver.
func NewReuse(ctx context.Context, env harness.Env) (harness.Driver, error) {
	return newDriver(ctx, env, config{name: reuseName, turns: TurnsPerSession})
}

// NewDisk returns the agcore-runtime-disk driver. Its data directory is a
// new temporary directory, removed by Close.
func NewDisk(ctx context.Context, env harness.Env) (harness.Driver, error) {
	return newDriver(ctx, env, config{name: diskName, turns: TurnsPerSession, onDisk: true})
}

func newDriver(_ context.Context, env harness.Env, cfg config) (harness.Driver, error) {
	model, err := openai.New(openai.Options{BaseURL: env.BaseURL, HTTPClient: env.HTTPClient, Model: workload.Model})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.name, err)
	}
	reg, err := agcoreloop.Registry()
	if err != nil {
		return nil, err
	}
	rc := actors.Config{
		Provider:    model,
		Model:       workload.Model,
		Tools:       reg,
		BasePrompt:  workload.SystemPrompt,
		IdleTimeout: IdleTimeout,
	}
	d := &driver{cfg: cfg}
	if cfg.onDisk {
		if d.dir, err = os.MkdirTemp("", "agcore-peer-*"); err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.name, err)
		}
		rc.DataDir, rc.Durability = d.dir, memory.DurabilityBatch
		d.rt, err = actors.New(rc)
	} else {
		d.rt, err = actors.NewInMemory(rc)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", cfg.name, err), d.removeDir())
	}
	return d, nil
}

func (d *driver) Turn(ctx context.Context) error {
	c, err := d.take(ctx)
	if err != nil {
		return err
	}
	res, err := c.s.Submit(ctx, messages.UserText(workload.Prompt))
	if err != nil {
		return fmt.Errorf("%s: %w", d.cfg.name, err)
	}
	if res.Outcome != messages.OutcomeCompleted {
		return fmt.Errorf("%s: turn ended %s: %s", d.cfg.name, res.Outcome, res.Reason)
	}
	if c.turns++; c.turns < d.cfg.turns {
		d.give(c)
	}
	return workload.CheckAnswer(res.Text)
}

// take returns a session no other turn is using: a free one, or a new one.
func (d *driver) take(ctx context.Context) (*conversation, error) {
	d.mu.Lock()
	if n := len(d.free); n > 0 {
		c := d.free[n-1]
		d.free = d.free[:n-1]
		d.mu.Unlock()
		return c, nil
	}
	d.mu.Unlock()
	s, err := d.rt.Open(ctx, fmt.Sprintf("bench-%d", d.next.Add(1)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.cfg.name, err)
	}
	return &conversation{s: s}, nil
}

// give puts c back among the free sessions.
func (d *driver) give(c *conversation) {
	d.mu.Lock()
	d.free = append(d.free, c)
	d.mu.Unlock()
}

func (d *driver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(d.rt.Shutdown(ctx), d.removeDir())
}

// removeDir removes the data directory of a driver on disk.
func (d *driver) removeDir() error {
	if d.dir == "" {
		return nil
	}
	return os.RemoveAll(d.dir)
}
