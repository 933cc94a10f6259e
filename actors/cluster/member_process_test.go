package cluster_test

// This file holds the member process of the multi-member tests: the test
// binary, run again with memberEnv set, joins the cluster as one member
// and serves until it is killed or told to stop.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	njs "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/actors/cluster"
	"github.com/agcore/agcore/memory/jetstream"
	"github.com/agcore/agcore/memory/jetstream/natstest"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// memberEnv carries a memberConfig (JSON) to a member process.
const memberEnv = "AGCORE_CLUSTER_TEST_MEMBER"

// memberConfig is what a member process needs.
type memberConfig struct {
	Name       string        `json:"name"`
	NATS       string        `json:"nats"`
	Streams    int           `json:"streams"`
	Port       int           `json:"port"`
	HealthPort int           `json:"health_port"`
	Seeds      []string      `json:"seeds"`
	Refresh    time.Duration `json:"refresh_ns"`
	Charges    string        `json:"charges"`
	HTTP       string        `json:"http"`
	// Bucket, when set, makes the member find the others in this NATS
	// bucket (Config.Membership) instead of Seeds.
	Bucket string `json:"bucket,omitempty"`
	// TTL is the bucket's NATSMembership.TTL.
	TTL time.Duration `json:"ttl_ns,omitempty"`
}

func TestMain(m *testing.M) {
	natstest.ServeIfChild()
	if cfg := os.Getenv(memberEnv); cfg != "" {
		if err := runMember(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "member:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// memberScript is the scripted model of every member: "charge-long" and
// "charge-short" call the charge tool, which holds for a minute or for
// 1.5 s; a tool result, or any other message, gets a text reply.
func memberScript() scripted.Script {
	return scripted.Script{Stateless: true, Rules: []scripted.Rule{
		{Name: "after-tool", Match: scripted.Match{Role: messages.RoleTool}, Reply: scripted.Reply{Text: "charged"}},
		{Name: "long", Match: scripted.Match{Role: messages.RoleUser, Contains: "charge-long"},
			Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "charge", Arguments: `{"hold_ms":60000}`}}}},
		{Name: "short", Match: scripted.Match{Role: messages.RoleUser, Contains: "charge-short"},
			Reply: scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: "charge", Arguments: `{"hold_ms":1500}`}}}},
		{Name: "text", Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: "ok"}},
	}}
}

func runMember(raw string) error {
	var cfg memberConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return err
	}
	logger := zerolog.New(zerolog.SyncWriter(os.Stdout)).With().Timestamp().Str("member", cfg.Name).Logger()
	// The setup's requests to the servers wait as long as a loaded
	// machine may need; the turns use the runtime's own contexts.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := nats.Connect(cfg.NATS, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		return err
	}
	defer nc.Close()
	j, err := jetstream.New(ctx, jetstream.Config{Conn: nc, Streams: cfg.Streams})
	if err != nil {
		return err
	}
	sm, err := jetstream.NewSessionMemory(ctx, jetstream.SessionMemoryConfig{Conn: nc})
	if err != nil {
		return err
	}
	perms, err := toolsys.NewPermissions(toolsys.PermissionConfig{Mode: toolsys.ModeBypass})
	if err != nil {
		return err
	}
	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
	reg.MustRegister(chargeTool{path: cfg.Charges, member: cfg.Name, logger: logger})
	rt, err := actors.New(actors.Config{
		Journal: j, SessionMemory: sm, Node: cfg.Name, Logger: logger.Level(zerolog.WarnLevel),
		Provider: scripted.MustNew(memberScript(), scripted.Options{}), Tools: reg,
		Compaction: actors.Compaction{Disabled: true},
	})
	if err != nil {
		return err
	}
	ccfg := cluster.Config{
		Runtime: rt, Port: cfg.Port, HealthPort: cfg.HealthPort, Seeds: cfg.Seeds, Refresh: cfg.Refresh,
		HTTPAddress: cfg.HTTP, Logger: logger.Level(zerolog.InfoLevel),
	}
	if cfg.Bucket != "" {
		js, err := njs.New(nc)
		if err != nil {
			return err
		}
		ccfg.Membership = &cluster.NATSMembership{JetStream: js, Bucket: cfg.Bucket, TTL: cfg.TTL}
	}
	m, err := cluster.Start(ctx, ccfg)
	if err != nil {
		return err
	}
	logger.Info().Str("address", m.Address()).Msg("test: member ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	return errors.Join(m.Shutdown(sctx), rt.Shutdown(sctx))
}

// chargeTool is a slow, non-idempotent tool: it appends "<session> <call
// id> <member>" to a file shared by the members and fsyncs it, logs
// "test: charge started", then holds for hold_ms before it answers. The
// line must never be written twice for one call.
type chargeTool struct {
	path   string
	member string
	logger zerolog.Logger
}

func (chargeTool) Name() string        { return "charge" }
func (chargeTool) Description() string { return "charges the card" }
func (chargeTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"hold_ms":{"type":"integer"}}}`)
}
func (chargeTool) Permission() toolsys.Permission { return toolsys.PermWrite }
func (chargeTool) SecretParams() []string         { return nil }
func (chargeTool) Idempotent() bool               { return false }

func (c chargeTool) Execute(ctx context.Context, args json.RawMessage, tc *toolsys.Context) (toolsys.Result, error) {
	var p struct {
		HoldMS int `json:"hold_ms"`
	}
	if err := json.Unmarshal(args, &p); err != nil {
		return toolsys.Result{}, err
	}
	f, err := os.OpenFile(c.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return toolsys.Result{}, err
	}
	_, err = fmt.Fprintf(f, "%s %s %s\n", tc.SessionID, tc.CallID, c.member)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return toolsys.Result{}, err
	}
	c.logger.Info().Str("session", tc.SessionID).Str("call_id", tc.CallID).Msg("test: charge started")
	t := time.NewTimer(time.Duration(p.HoldMS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return toolsys.Result{}, ctx.Err()
	}
	return toolsys.Result{Content: "charged by " + c.member}, nil
}
