package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/actors/cluster"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/jetstream"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// logWatch collects a logger's JSON lines and lets a test wait for one.
type logWatch struct {
	mu      sync.Mutex
	lines   []map[string]any
	raw     strings.Builder
	changed chan struct{}
}

func newLogWatch() *logWatch { return &logWatch{changed: make(chan struct{})} }

func (w *logWatch) Write(p []byte) (int, error) {
	var l map[string]any
	_ = json.Unmarshal(p, &l)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.raw.Write(p)
	if l != nil {
		w.lines = append(w.lines, l)
		close(w.changed)
		w.changed = make(chan struct{})
	}
	return len(p), nil
}

// wait waits until a line for which match is true is logged.
func (w *logWatch) wait(ctx context.Context, t testing.TB, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	seen := 0
	for {
		w.mu.Lock()
		lines, changed := w.lines[seen:], w.changed
		seen = len(w.lines)
		w.mu.Unlock()
		for _, l := range lines {
			if match(l) {
				return l
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
	}
}

func (w *logWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.raw.String()
}

// count returns how many lines match.
func (w *logWatch) count(match func(map[string]any) bool) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, l := range w.lines {
		if match(l) {
			n++
		}
	}
	return n
}

// left matches a topology line in which the member at addr left.
func left(addr string) func(map[string]any) bool {
	return func(l map[string]any) bool {
		if l["message"] != "cluster: topology" {
			return false
		}
		ls, _ := l["left"].([]any)
		return slices.Contains(ls, any(addr))
	}
}

// natsEnv is one embedded NATS server and a JetStream context on it.
type natsEnv struct {
	url string
	js  njs.JetStream
}

func newNATSEnv(t *testing.T) natsEnv {
	t.Helper()
	srv := natstest.RunServer(t, natstest.Options{})
	js, err := njs.New(natstest.Connect(t, srv.URL()))
	if err != nil {
		t.Fatal(err)
	}
	return natsEnv{url: srv.URL(), js: js}
}

// startNATSMember starts a member (rt set) or a client (rt nil) finding
// the others through bucket, logging into w.
func startNATSMember(ctx context.Context, t *testing.T, env natsEnv, bucket string, ttl time.Duration, rt *actors.Runtime, node string, w *logWatch) *cluster.Member {
	t.Helper()
	cfg := cluster.Config{
		Runtime: rt, Membership: &cluster.NATSMembership{JetStream: env.js, Bucket: bucket, TTL: ttl},
		Refresh: 200 * time.Millisecond, Attempt: 500 * time.Millisecond, Logger: zerolog.New(w).Level(zerolog.InfoLevel),
	}
	if rt != nil {
		cfg.Port = freePort(t)
		cfg.HTTPAddress = "http://" + node + ".invalid:8080"
	}
	m, err := cluster.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = m.Shutdown(sctx)
		if t.Failed() {
			t.Logf("log of %s:\n%s", m.Address(), w.String())
		}
	})
	return m
}

// holdTool is a non-idempotent tool that records each call and holds
// until release is closed.
type holdTool struct {
	release <-chan struct{}
	mu      *sync.Mutex
	calls   map[string][]string // call id -> nodes that ran it
	started chan<- string       // session ids
	node    string
}

func (holdTool) Name() string        { return "hold" }
func (holdTool) Description() string { return "holds until released" }
func (holdTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (holdTool) Permission() toolsys.Permission { return toolsys.PermWrite }
func (holdTool) SecretParams() []string         { return nil }
func (holdTool) Idempotent() bool               { return false }

func (h holdTool) Execute(ctx context.Context, _ json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	h.mu.Lock()
	h.calls[tc.SessionID+"/"+tc.CallID] = append(h.calls[tc.SessionID+"/"+tc.CallID], h.node)
	h.mu.Unlock()
	h.started <- tc.SessionID
	select {
	case <-h.release:
	case <-ctx.Done():
		return toolsys.Result{}, ctx.Err()
	}
	return toolsys.Result{Content: "held by " + h.node}, nil
}

// newRuntime returns a runtime named node on a journal in env's server,
// with the hold tool.
func newRuntime(ctx context.Context, t *testing.T, env natsEnv, node string, hold holdTool) (*actors.Runtime, *jetstream.Journal) {
	t.Helper()
	j, err := jetstream.New(ctx, jetstream.Config{Conn: natstest.Connect(t, env.url), Options: memory.JournalOptions{Durability: memory.DurabilityNone}})
	if err != nil {
		t.Fatal(err)
	}
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeBypass})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
	hold.node = node
	reg.MustRegister(hold)
	rt, err := actors.New(actors.Config{
		Journal: j, Node: node, Logger: zerolog.Nop(), Tools: reg, Compaction: actors.Compaction{Disabled: true},
		Provider: scripted.MustNew(scripted.Script{Stateless: true, Rules: []scripted.Rule{
			{Name: "after-tool", Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "held"}},
			{Name: "hold", Match: scripted.Match{Role: messages.RoleUser, Contains: "hold"},
				Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "hold", Arguments: `{}`}}}},
			{Name: "text", Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}},
		}}, scripted.Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(sctx)
	})
	return rt, j
}

// TestNATSMembership_Config refuses NATS membership configurations that
// cannot work, naming the field.
func TestNATSMembership_Config(t *testing.T) {
	env := newNATSEnv(t)
	for _, tc := range []struct {
		name  string
		cfg   cluster.Config
		field string
	}{
		{"no JetStream", cluster.Config{Membership: &cluster.NATSMembership{}}, "Membership.JetStream"},
		{"seeds too", cluster.Config{Seeds: []string{"127.0.0.1:1"}, Membership: &cluster.NATSMembership{JetStream: env.js}}, "Seeds"},
		{"bad bucket", cluster.Config{Membership: &cluster.NATSMembership{JetStream: env.js, Bucket: "a.b"}}, "Membership.Bucket"},
		{"TTL under 100 ms", cluster.Config{Refresh: 10 * time.Millisecond, Membership: &cluster.NATSMembership{JetStream: env.js, TTL: 50 * time.Millisecond}}, "Membership.TTL"},
		{"TTL not over Refresh", cluster.Config{Refresh: time.Second, Membership: &cluster.NATSMembership{JetStream: env.js, TTL: time.Second}}, "Membership.TTL"},
		{"replicas", cluster.Config{Membership: &cluster.NATSMembership{JetStream: env.js, Replicas: 7}}, "Membership.Replicas"},
		{"member without port", cluster.Config{Runtime: &actors.Runtime{}, Membership: &cluster.NATSMembership{JetStream: env.js}}, "Port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cluster.Start(t.Context(), tc.cfg)
			if !errors.Is(err, cluster.ErrConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("Start: error %v, want ErrConfig naming %s", err, tc.field)
			}
		})
	}

	t.Run("bucket without limit markers", func(t *testing.T) {
		if _, err := env.js.CreateKeyValue(t.Context(), njs.KeyValueConfig{Bucket: "no_markers", TTL: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
		_, err := cluster.Start(t.Context(), cluster.Config{Membership: &cluster.NATSMembership{JetStream: env.js, Bucket: "no_markers", TTL: 2 * time.Second}})
		if !errors.Is(err, cluster.ErrConfig) || !strings.Contains(err.Error(), "Membership.Bucket") || !strings.Contains(err.Error(), "limit markers") {
			t.Errorf("Start on a bucket without limit markers: error %v, want ErrConfig naming Membership.Bucket", err)
		}
	})

	t.Run("bucket with another TTL", func(t *testing.T) {
		if _, err := env.js.CreateKeyValue(t.Context(), njs.KeyValueConfig{Bucket: "other_ttl", TTL: time.Minute, LimitMarkerTTL: time.Second}); err != nil {
			t.Fatal(err)
		}
		_, err := cluster.Start(t.Context(), cluster.Config{Membership: &cluster.NATSMembership{JetStream: env.js, Bucket: "other_ttl", TTL: 2 * time.Second}})
		if !errors.Is(err, cluster.ErrConfig) || !strings.Contains(err.Error(), "Membership.TTL") || !strings.Contains(err.Error(), "1m0s") {
			t.Errorf("Start on a bucket whose TTL is 1m: error %v, want ErrConfig naming Membership.TTL and the bucket's", err)
		}
	})
}

// TestNATSMembership_ExpiryAndMalformed writes member keys by hand: a
// well-formed key that nobody refreshes joins the topology and leaves it
// when it expires; malformed values, and a member of another cluster, are
// ignored with a warning and do not stop the watch.
func TestNATSMembership_ExpiryAndMalformed(t *testing.T) {
	env := newNATSEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const bucket, ttl = "expiry", time.Second
	w := newLogWatch()
	c := startNATSMember(ctx, t, env, bucket, ttl, nil, "", w)
	kv, err := env.js.KeyValue(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	for key, value := range map[string]string{
		"garbage":   `{not json`,
		"noport":    `{"cluster":"agcore","id":"noport","host":"127.0.0.1","kinds":["session"]}`,
		"otherid":   `{"cluster":"agcore","id":"ghost","host":"127.0.0.1","port":7000,"kinds":["session"]}`,
		"nokinds":   `{"cluster":"agcore","id":"nokinds","host":"127.0.0.1","port":7000}`,
		"elsewhere": `{"cluster":"other","id":"elsewhere","host":"127.0.0.1","port":7001,"kinds":["session"]}`,
	} {
		if _, err := kv.Put(ctx, key, []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
	ghost := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	host, port, _ := net.SplitHostPort(ghost)
	p, _ := strconv.Atoi(port)
	rec, _ := json.Marshal(map[string]any{"cluster": "agcore", "id": "ghost", "host": host, "port": p, "kinds": []string{"session"}})
	if _, err := kv.Put(ctx, "ghost", rec); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitMembers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := c.Members(); !slices.Equal(got, []string{ghost}) {
		t.Errorf("members %v, want only the well-formed key of this cluster, %s", got, ghost)
	}
	ignored := func(l map[string]any) bool { return l["message"] == "cluster: member key ignored" }
	if n := w.count(ignored); n != 4 {
		t.Errorf("%d warnings of an ignored key, want 4 (one per malformed value):\n%s", n, w.String())
	}
	// Nobody refreshes the ghost's key: it expires, and it leaves.
	w.wait(ctx, t, "the ghost's key to expire", left(ghost))
	if got := c.Members(); len(got) != 0 {
		t.Errorf("members after the expiry: %v, want none", got)
	}
}

// TestNATSMembership_JoinLeave runs two members and a client on one
// bucket whose TTL outlasts the test: the members' keys carry their
// records, every one sees both members, and a member that shuts down
// deletes its key and leaves the others' topology at once.
func TestNATSMembership_JoinLeave(t *testing.T) {
	skipUnderRace(t)
	env := newNATSEnv(t)
	// The TTL is longer than the test may run: a leave seen before the
	// deadline was not an expiry.
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	const bucket, ttl = "joinleave", 10 * time.Minute
	hold := holdTool{release: make(chan struct{}), mu: &sync.Mutex{}, calls: map[string][]string{}, started: make(chan string, 16)}
	rtA, _ := newRuntime(ctx, t, env, "a", hold)
	rtB, _ := newRuntime(ctx, t, env, "b", hold)
	wc, wa, wb := newLogWatch(), newLogWatch(), newLogWatch()
	c := startNATSMember(ctx, t, env, bucket, ttl, nil, "", wc)
	a := startNATSMember(ctx, t, env, bucket, ttl, rtA, "a", wa)
	b := startNATSMember(ctx, t, env, bucket, ttl, rtB, "b", wb)
	for _, m := range []*cluster.Member{c, a, b} {
		if err := m.WaitMembers(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{a.Address(), b.Address()}
	slices.Sort(want)
	if got := c.Members(); !slices.Equal(got, want) {
		t.Errorf("client sees %v, want %v", got, want)
	}
	kv, err := env.js.KeyValue(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("bucket keys %v, want one per member", keys)
	}
	records := map[string]map[string]any{}
	for _, k := range keys {
		e, err := kv.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal(e.Value(), &r); err != nil {
			t.Fatalf("key %s: %v", k, err)
		}
		records[fmt.Sprintf("%s:%v", r["host"], r["port"])] = r
	}
	for m, node := range map[*cluster.Member]string{a: "a", b: "b"} {
		r := records[m.Address()]
		if r == nil || r["http"] != "http://"+node+".invalid:8080" || r["cluster"] != "agcore" {
			t.Errorf("record of %s: %v, want its address, HTTP address and cluster", m.Address(), r)
		}
	}
	// A session placed on b answers from b.
	for i := range 20 {
		id := fmt.Sprintf("jl-%d", i)
		owner, err := c.Owner(id)
		if err != nil {
			t.Fatal(err)
		}
		if owner != b.Address() {
			continue
		}
		reply, err := c.Submit(ctx, id, id+"-t1", "hello")
		if err != nil || reply.Member != b.Address() {
			t.Fatalf("turn on %s: %+v, %v; want it answered by %s", id, reply, err, b.Address())
		}
		break
	}

	bAddr := b.Address()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	wc.wait(ctx, t, "b to leave the client's topology", left(bAddr))
	wa.wait(ctx, t, "b to leave a's topology", left(bAddr))
	if keys, err := kv.Keys(ctx); err != nil || len(keys) != 1 {
		t.Errorf("bucket keys after b left: %v, %v; want a's only", keys, err)
	}
	if got := c.Members(); !slices.Equal(got, []string{a.Address()}) {
		t.Errorf("client sees %v after b left, want only a", got)
	}
}

// TestNATSMembership_JoinMovesSessions starts turns whose tool holds on
// 12 sessions of a lone member a, then lets member b join: the sessions
// whose owner becomes b are served by b from then on, and a's copies,
// still in their tool, are fenced at their next append: none of their
// results lands in the journal, and no tool runs twice. It is the
// "member joins" case of docs/cluster.md.
func TestNATSMembership_JoinMovesSessions(t *testing.T) {
	skipUnderRace(t)
	env := newNATSEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const bucket, ttl, sessions = "joinmoves", 10 * time.Minute, 12
	release := make(chan struct{})
	started := make(chan string, 2*sessions)
	hold := holdTool{release: release, mu: &sync.Mutex{}, calls: map[string][]string{}, started: started}
	rtA, journal := newRuntime(ctx, t, env, "a", hold)
	rtB, _ := newRuntime(ctx, t, env, "b", hold)
	wc, wa, wb := newLogWatch(), newLogWatch(), newLogWatch()
	c := startNATSMember(ctx, t, env, bucket, ttl, nil, "", wc)
	a := startNATSMember(ctx, t, env, bucket, ttl, rtA, "a", wa)
	if err := c.WaitMembers(ctx, 1); err != nil {
		t.Fatal(err)
	}

	type result struct {
		id    string
		reply *cluster.TurnReply
		err   error
	}
	results := make(chan result, sessions)
	for i := range sessions {
		id := fmt.Sprintf("move-%d", i)
		go func() {
			r, err := c.Submit(ctx, id, id+"-t1", "hold")
			results <- result{id, r, err}
		}()
	}
	for range sessions {
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatalf("the tools did not start on a: %v", ctx.Err())
		}
	}

	b := startNATSMember(ctx, t, env, bucket, ttl, rtB, "b", wb)
	for _, m := range []*cluster.Member{c, a, b} {
		if err := m.WaitMembers(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}
	var moved []string
	for i := range sessions {
		id := fmt.Sprintf("move-%d", i)
		owner, err := c.Owner(id)
		if err != nil {
			t.Fatal(err)
		}
		if owner == b.Address() {
			moved = append(moved, id)
		}
	}
	if len(moved) == 0 || len(moved) == sessions {
		t.Fatalf("%d of %d sessions moved to b; the rendezvous hash should move some", len(moved), sessions)
	}
	// The moved sessions are activated on b (which fences a's copies),
	// before a's tools end.
	for _, id := range moved {
		st, err := c.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Member != b.Address() {
			t.Errorf("status of moved session %s answered by %s, want b (%s)", id, st.Member, b.Address())
		}
	}
	close(release)
	got := map[string]result{}
	for range sessions {
		select {
		case r := <-results:
			got[r.id] = r
		case <-ctx.Done():
			t.Fatalf("the turns did not end: %v", ctx.Err())
		}
	}
	for _, id := range moved {
		wa.wait(ctx, t, "a's copy of "+id+" fenced", msgIs("cluster: session fenced by a newer activation; its copy here stopped", "session", id))
		reply, err := c.Submit(ctx, id, id+"-t2", "hello")
		if err != nil || reply.Member != b.Address() || reply.Result == nil || reply.Result.Text != "ok" {
			t.Errorf("second turn on moved session %s: %+v, %v; want it answered by b", id, reply, err)
		}
		evs := journalEvents(ctx, t, journal, id)
		fence := -1
		for i, ev := range evs {
			if act, ok := ev.(messages.Activated); ok && act.Node == "b" {
				fence = i
				break
			}
		}
		if fence < 0 {
			t.Fatalf("no activation by b in the journal of %s", id)
		}
		for _, ev := range evs[fence:] {
			if tr, ok := ev.(messages.ToolResult); ok && tr.Content == "held by a" {
				t.Errorf("a's fenced copy of %s journaled its tool result after b's activation", id)
			}
		}
	}
	for id, r := range got {
		if slices.Contains(moved, id) {
			continue
		}
		if r.err != nil || r.reply.Member != a.Address() || r.reply.Result == nil || r.reply.Result.Text != "held" {
			t.Errorf("turn on %s, which stayed on a: %+v, %v; want it completed on a", id, r.reply, r.err)
		}
	}
	hold.mu.Lock()
	defer hold.mu.Unlock()
	for call, nodes := range hold.calls {
		if len(nodes) != 1 {
			t.Errorf("tool call %s ran on %v, want once", call, nodes)
		}
	}
}

// journalEvents reads session's journal from seq 1 and checks it is
// contiguous.
func journalEvents(ctx context.Context, t *testing.T, j *jetstream.Journal, session string) []messages.JournalEvent {
	t.Helper()
	var evs []messages.JournalEvent
	var want uint64 = 1
	for e, err := range j.Read(ctx, session, 1) {
		if err != nil {
			t.Fatalf("journal of %s: %v", session, err)
		}
		if e.Envelope.Seq != want {
			t.Fatalf("journal of %s: seq %d where %d was due", session, e.Envelope.Seq, want)
		}
		want++
		evs = append(evs, e.Event)
	}
	return evs
}
