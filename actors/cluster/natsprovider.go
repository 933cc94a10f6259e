package cluster

// This file holds the cluster provider on a NATS JetStream key-value
// bucket: a member puts its record under its id and refreshes it; the
// bucket's MaxAge expires the key of a member that stops refreshing, and
// the servers' delete markers tell the watchers; every member and client
// watches the bucket and hands the members it holds to protoactor.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/cluster"
	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// natsProvider is a protoactor ClusterProvider on a NATS KV bucket.
type natsProvider struct {
	cfg     NATSMembership
	refresh time.Duration
	logger  zerolog.Logger
	// http is the member's HTTP address, announced in its record.
	http string

	kv     njs.KeyValue
	key    string // the member's key; empty for a client
	record []byte

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

var _ cluster.ClusterProvider = (*natsProvider)(nil)

// newNATSProvider returns a provider for a member whose Config is cfg
// (defaults filled in).
func newNATSProvider(cfg Config) *natsProvider {
	ctx, cancel := context.WithCancel(context.Background())
	return &natsProvider{
		cfg: *cfg.Membership, refresh: cfg.Refresh, http: cfg.HTTPAddress,
		logger: cfg.Logger.With().Str("bucket", cfg.Membership.Bucket).Logger(), ctx: ctx, cancel: cancel,
	}
}

// open opens the membership bucket, creating it when it does not exist,
// and checks that its MaxAge is the configured TTL. Start calls it before
// protoactor starts, so that a wrong bucket starts nothing.
func (p *natsProvider) open(ctx context.Context) error {
	kv, err := p.bucket(ctx)
	if err != nil {
		return err
	}
	p.kv = kv
	return nil
}

// bucket opens or creates the membership bucket and checks it.
func (p *natsProvider) bucket(ctx context.Context) (njs.KeyValue, error) {
	replicas := p.cfg.Replicas
	if replicas == 0 {
		replicas = 1
		if p.cfg.JetStream.Conn().ConnectedClusterName() != "" {
			replicas = 3
		}
	}
	kv, err := p.cfg.JetStream.CreateKeyValue(ctx, njs.KeyValueConfig{
		Bucket: p.cfg.Bucket, Description: "agcore cluster members", History: 1, TTL: p.cfg.TTL,
		LimitMarkerTTL: max(time.Second, p.cfg.TTL), Replicas: replicas,
	})
	if errors.Is(err, njs.ErrBucketExists) {
		kv, err = p.cfg.JetStream.KeyValue(ctx, p.cfg.Bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: membership bucket %s: %w", p.cfg.Bucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: membership bucket %s: %w", p.cfg.Bucket, err)
	}
	if st.TTL() != p.cfg.TTL {
		return nil, configErr("Membership.TTL", "%v, but bucket %s expires keys after %v: give every member the same TTL", p.cfg.TTL, p.cfg.Bucket, st.TTL())
	}
	if st.LimitMarkerTTL() == 0 {
		return nil, configErr("Membership.Bucket", "bucket %s has no limit markers (LimitMarkerTTL), so the expiry of a member's key would go unseen: remove it or name another", p.cfg.Bucket)
	}
	return kv, nil
}

// StartMember puts the member's record, starts its refresh and watches
// the bucket.
func (p *natsProvider) StartMember(c *cluster.Cluster) error {
	host, port, err := c.ActorSystem.GetHostPort()
	if err != nil {
		return err
	}
	id := c.ActorSystem.ID
	if !validKey.MatchString(id) {
		return fmt.Errorf("cluster: member id %q is not usable as a key of bucket %s", id, p.cfg.Bucket)
	}
	p.record, err = json.Marshal(memberRecord{
		Cluster: c.Config.Name, ID: id, Host: host, Port: port, Kinds: c.GetClusterKinds(), HTTP: p.http,
	})
	if err != nil {
		return err
	}
	if err := p.start(c); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.TTL)
	defer cancel()
	if _, err := p.kv.Put(ctx, id, p.record); err != nil {
		p.stop()
		return fmt.Errorf("cluster: put member key %s in bucket %s: %w", id, p.cfg.Bucket, err)
	}
	p.key = id
	p.wg.Go(p.refreshLoop)
	return nil
}

// StartClient watches the bucket.
func (p *natsProvider) StartClient(c *cluster.Cluster) error { return p.start(c) }

// start starts the watcher of the bucket open opened.
func (p *natsProvider) start(c *cluster.Cluster) error {
	if p.kv == nil {
		return fmt.Errorf("cluster: membership bucket %s not opened", p.cfg.Bucket)
	}
	w, err := p.kv.WatchAll(p.ctx)
	if err != nil {
		return fmt.Errorf("cluster: watch bucket %s: %w", p.cfg.Bucket, err)
	}
	p.wg.Go(func() { p.watch(c, w) })
	return nil
}

// refreshLoop puts the member's record every Refresh, which renews its
// key's age, until Shutdown.
func (p *natsProvider) refreshLoop() {
	t := time.NewTicker(p.refresh)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(p.ctx, p.cfg.TTL)
		_, err := p.kv.Put(ctx, p.key, p.record)
		cancel()
		if err != nil && p.ctx.Err() == nil {
			p.logger.Warn().Err(err).Str("key", p.key).Msg("cluster: member key not refreshed; it expires if this goes on")
		}
	}
}

// watch keeps the members the bucket holds and hands them to protoactor
// at each change once the bucket's current keys are read. When the
// watcher ends before Shutdown (the servers dropped its consumer), it
// watches again from the bucket's current keys.
func (p *natsProvider) watch(c *cluster.Cluster, w njs.KeyWatcher) {
	records := make(map[string]memberRecord)
	for {
		caughtUp := false
		for e := range w.Updates() {
			if e == nil {
				caughtUp = true
				p.publish(c, records)
				continue
			}
			p.apply(records, e)
			if caughtUp {
				p.publish(c, records)
			}
		}
		_ = w.Stop()
		if p.ctx.Err() != nil {
			return
		}
		p.logger.Warn().Msg("cluster: membership watcher ended; watching the bucket again")
		for {
			t := time.NewTimer(p.refresh)
			select {
			case <-p.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			var err error
			if w, err = p.kv.WatchAll(p.ctx); err == nil {
				break
			}
			p.logger.Warn().Err(err).Msg("cluster: membership bucket not watched")
		}
		clear(records)
	}
}

// apply updates records with the bucket entry e: a put adds or replaces a
// member (a malformed value is logged and ignored), a delete or purge
// (graceful leave, expiry) removes it.
func (p *natsProvider) apply(records map[string]memberRecord, e njs.KeyValueEntry) {
	if e.Operation() != njs.KeyValuePut {
		delete(records, e.Key())
		return
	}
	r, err := decodeRecord(e.Key(), e.Value())
	if err != nil {
		delete(records, e.Key())
		p.logger.Warn().Err(err).Uint64("revision", e.Revision()).Msg("cluster: member key ignored")
		return
	}
	records[e.Key()] = r
}

// publish hands the members of this cluster in records to protoactor,
// which publishes a topology when they changed.
func (p *natsProvider) publish(c *cluster.Cluster, records map[string]memberRecord) {
	members := make([]*cluster.Member, 0, len(records))
	for _, r := range records {
		if r.Cluster != c.Config.Name {
			continue
		}
		members = append(members, &cluster.Member{Id: r.ID, Host: r.Host, Port: int32(r.Port), Kinds: r.Kinds})
	}
	c.MemberList.UpdateClusterTopology(members)
}

// Shutdown stops the refresh and the watcher and, for a member, deletes
// its key, so that the others see it leave at once rather than after the
// TTL.
func (p *natsProvider) Shutdown(bool) error {
	var err error
	p.once.Do(func() {
		p.stop()
		if p.key == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(p.cfg.TTL, time.Second))
		defer cancel()
		if derr := p.kv.Delete(ctx, p.key); derr != nil {
			// protoactor drops this error: the log is where it shows.
			err = fmt.Errorf("cluster: delete member key %s from bucket %s: %w", p.key, p.cfg.Bucket, derr)
			p.logger.Warn().Err(err).Msg("cluster: member key left to expire")
		}
	})
	return err
}

// stop ends the refresh and the watcher and waits for them.
func (p *natsProvider) stop() {
	p.cancel()
	p.wg.Wait()
}
