package main

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/toolsys/sandbox"
)

// envCheck is one line of the environment section of `agcore doctor`.
type envCheck struct {
	Name string `json:"name"`
	// Status is "ok", "warn" or "fail".
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// environmentChecks are doctor's checks of the machine agcore runs on, as
// opposed to the data in the data directory: each adds one line to the
// report and never fails it. Checks of the environment belong here.
func environmentChecks(ctx context.Context, dataDir string) []envCheck {
	return []envCheck{checkDiskSpace(dataDir), checkConfinement(ctx)}
}

// checkConfinement reports whether bash's commands run confined on this
// host (it runs one confined command).
func checkConfinement(ctx context.Context) envCheck {
	c := envCheck{Name: "bash confinement", Status: "ok"}
	st := sandbox.Probe(ctx)
	if st.Confined {
		c.Detail = "bash and bash_process run their commands " + st.String()
		return c
	}
	c.Status = "warn"
	c.Detail = fmt.Sprintf("bash and bash_process are %s; with sandbox.mode refuse (the default) they refuse to run, with warn they run unconfined", st)
	return c
}

// checkDiskSpace reports the free space of the data directory's file
// system against the margin journal writes keep (memory.Options.MinFreeSpace
// at its default): below it, turns fail with "no space left on device".
func checkDiskSpace(dataDir string) envCheck {
	c := envCheck{Name: "disk space", Status: "ok"}
	free, err := memory.FreeSpace(dataDir)
	if err != nil {
		c.Status, c.Detail = "warn", fmt.Sprintf("cannot tell the free space of %s: %v", dataDir, err)
		return c
	}
	c.Detail = fmt.Sprintf("%d MiB free on the file system of the data directory (journal writes stop below %d MiB)", free>>20, memory.DefaultMinFreeSpace>>20)
	switch {
	case free < memory.DefaultMinFreeSpace:
		c.Status = "fail"
	case free < 4*memory.DefaultMinFreeSpace:
		c.Status = "warn"
	}
	return c
}
