package config

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/schedule"
	"github.com/agcore/agcore/toolsys"
)

// Schedules configures scheduled agent runs (docs/schedules.md): cron
// schedules kept in the data directory (`agcore schedule add`, the HTTP
// API, or the agents' schedule tools) that `agcore serve` fires.
type Schedules struct {
	// Disabled keeps `agcore serve` from firing schedules. False (the
	// default) runs the scheduler in serve; no other command fires any.
	Disabled bool `yaml:"disabled"`
	// Tools gives agents schedule_create, schedule_list and
	// schedule_delete (source schedule; create and delete need permission
	// write), to schedule their own follow-ups in their session or in
	// fresh sessions. False (the default) gives them none.
	Tools bool `yaml:"tools"`
	// MinInterval is the shortest gap allowed between two fire times of a
	// schedule an agent creates. Zero means 1m.
	MinInterval time.Duration `yaml:"min_interval"`
	// MaxPerSession is how many active schedules one session may have
	// created with schedule_create. Zero means 10.
	MaxPerSession int `yaml:"max_per_session"`
}

// validateSchedules checks the schedules section.
func validateSchedules(ps *problems, s Schedules) {
	if s.MinInterval < 0 {
		ps.add("schedules.min_interval", "must not be negative, got %v", s.MinInterval)
	}
	if s.MaxPerSession < 0 {
		ps.add("schedules.max_per_session", "must not be negative, got %d", s.MaxPerSession)
	}
}

// schedules opens the schedules of the data directory when something
// needs them: the server (BuildOptions.Scheduler), which fires them
// unless schedules.disabled, or the agents' tools (schedules.tools). The runtime
// then runs on the store Build opened (shared with the knowledge base),
// and Close closes it. With ToolsOnly the tools are registered for
// listing only, over no store.
func (b *Built) schedules(c *Config, opts BuildOptions) error {
	cfg := schedule.ToolsConfig{MinInterval: c.Schedules.MinInterval, MaxPerSession: c.Schedules.MaxPerSession}
	if opts.ToolsOnly {
		if c.Schedules.Tools {
			return registerScheduleTools(b.Tools, nil, cfg)
		}
		return nil
	}
	if !opts.Scheduler && !c.Schedules.Tools {
		return nil
	}
	if c.DataDir == "" {
		return errors.New("config: schedules need a data directory (data_dir or --data-dir)")
	}
	store := b.Runtime.Store
	if store == nil {
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			return fmt.Errorf("config: data directory: %w", err)
		}
		log := opts.Logger.With().Str("component", "store").Logger()
		var err error
		if store, err = memory.Open(memory.Options{Dir: c.DataDir, Logger: log}); err != nil {
			return fmt.Errorf("config: data directory %s: %w", c.DataDir, err)
		}
		b.closers = append(b.closers, store.Close)
		b.Runtime.DataDir, b.Runtime.Store = "", store
	}
	b.Schedules = schedule.New(store, schedule.Options{})
	if opts.Scheduler && !c.Schedules.Disabled {
		b.Runtime.Schedules = b.Schedules
	}
	if c.Schedules.Tools {
		return registerScheduleTools(b.Tools, b.Schedules, cfg)
	}
	return nil
}

func registerScheduleTools(reg *toolsys.Registry, s *schedule.Store, cfg schedule.ToolsConfig) error {
	if err := schedule.RegisterTools(reg, s, cfg); err != nil {
		return fmt.Errorf("config: schedules.tools: %w", err)
	}
	return nil
}
