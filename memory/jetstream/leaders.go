package jetstream

// This file reports which server leads each of the journal's streams,
// for status displays (agcore cluster status).

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
)

// StreamLeader is one of the journal's streams and the servers that hold it.
type StreamLeader struct {
	// Stream is the stream's name.
	Stream string `json:"stream"`
	// Leader is the name of the server that leads it; empty while an
	// election runs, or for a server outside a cluster.
	Leader string `json:"leader"`
	// Replicas are the names of the other servers holding it, sorted.
	Replicas []string `json:"replicas,omitempty"`
	// Messages is the number of records in the stream.
	Messages uint64 `json:"messages"`
}

// Leaders returns the journal streams on nc whose names start with
// prefix + "_" (prefix empty means DefaultStream), sorted by name, each
// with its leader as the servers report it now. It only reads: no stream
// is created.
func Leaders(ctx context.Context, nc *nats.Conn, prefix string) ([]StreamLeader, error) {
	if prefix == "" {
		prefix = DefaultStream
	}
	js, err := njs.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: leaders: %w", err)
	}
	var out []StreamLeader
	list := js.ListStreams(ctx)
	for info := range list.Info() {
		if !strings.HasPrefix(info.Config.Name, prefix+"_") {
			continue
		}
		sl := StreamLeader{Stream: info.Config.Name, Messages: info.State.Msgs}
		if info.Cluster != nil {
			sl.Leader = info.Cluster.Leader
			for _, r := range info.Cluster.Replicas {
				sl.Replicas = append(sl.Replicas, r.Name)
			}
			slices.Sort(sl.Replicas)
		}
		out = append(out, sl)
	}
	if err := list.Err(); err != nil {
		return nil, fmt.Errorf("jetstream: leaders: list streams: %w", err)
	}
	slices.SortFunc(out, func(a, b StreamLeader) int { return strings.Compare(a.Stream, b.Stream) })
	return out, nil
}
