package actors

// This file answers the sampling requests of MCP servers that may make
// them (mcp.ServerConfig.Sampling). A request attributed to an active
// session is approved through that session's approval path, answered by
// the session's agent's model, journaled and counted in the session's
// usage (session_sample.go); any other is approved through
// Config.Approver, answered by the runtime's default model, and counted in
// the runtime's usage.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/toolsys"
	"github.com/agcore/agcore/toolsys/mcp"
)

// mcpSampleApproval bounds the wait for the approval of a sampling
// request.
const mcpSampleApproval = time.Minute

// mcpSample returns the SampleFunc of server: a request attributed to an
// active session goes through sessionSample; any other is put to
// Config.Approver as a call of the pseudo-tool mcp__<server>__sampling
// (execute permission, the server's messages as arguments) and, once
// allowed, answered by the default model, whose usage is recorded in the
// runtime's.
func (rt *Runtime) mcpSample(server string) mcp.SampleFunc {
	return func(ctx context.Context, req mcp.SampleRequest) (mcp.SampleResult, error) {
		args, err := samplingArgs(req)
		if err != nil {
			return mcp.SampleResult{}, err
		}
		if req.Session != "" {
			if res, handled, err := rt.sessionSample(ctx, server, req, args); handled {
				return res, err
			}
		}
		if rt.cfg.Approver == nil {
			return mcp.SampleResult{}, fmt.Errorf("%w: no approver is configured (Config.Approver)", mcp.ErrSamplingRefused)
		}
		actx, cancel := context.WithTimeout(ctx, mcpSampleApproval)
		ap, err := rt.cfg.Approver.Approve(actx, toolsys.ApprovalRequest{
			Request: toolsys.Request{Tool: mcp.ToolName(server, "sampling"), Permission: toolsys.PermExecute, Args: args, Subject: server},
			Reason:  samplingReason(server),
			Timeout: mcpSampleApproval,
		})
		cancel()
		switch {
		case err != nil:
			return mcp.SampleResult{}, fmt.Errorf("%w: %w", mcp.ErrSamplingRefused, err)
		case !ap.Allow:
			return mcp.SampleResult{}, fmt.Errorf("%w: %s", mcp.ErrSamplingRefused, ap.Reason)
		}
		p, model, err := rt.providers.Resolve(rt.cfg.Model)
		if err != nil {
			return mcp.SampleResult{}, err
		}
		res, usage, err := sampleWith(ctx, server, p, model, req)
		if err != nil {
			return mcp.SampleResult{}, err
		}
		rt.tracker.Record(res.Model, usage)
		return res, nil
	}
}

// samplingArgs are the arguments the approver is shown: the messages and
// the token limit.
func samplingArgs(req mcp.SampleRequest) (json.RawMessage, error) {
	shown := make([]map[string]string, len(req.Messages))
	for i, m := range req.Messages {
		shown[i] = map[string]string{"role": string(m.Role), "text": m.Text()}
	}
	return json.Marshal(map[string]any{"messages": shown, "max_tokens": req.MaxTokens})
}

func samplingReason(server string) string {
	return fmt.Sprintf("MCP server %s asks the model for a completion (sampling)", server)
}

// sampleWith asks model of p for the completion req asks for.
func sampleWith(ctx context.Context, server string, p providers.Provider, model string, req mcp.SampleRequest) (mcp.SampleResult, messages.Usage, error) {
	resp, err := p.Chat(ctx, messages.Request{Model: model, Messages: req.Messages, MaxTokens: req.MaxTokens,
		Temperature: req.Temperature, Stop: req.Stop})
	if err != nil {
		return mcp.SampleResult{}, messages.Usage{}, fmt.Errorf("sampling for mcp server %s: %w", server, err)
	}
	name := resp.Model
	if name == "" {
		name = model
	}
	stop := "endTurn"
	if resp.FinishReason == messages.FinishLength {
		stop = "maxTokens"
	}
	return mcp.SampleResult{Text: resp.Message.Text(), Model: name, StopReason: stop}, resp.Usage, nil
}

// sessionSample answers a request attributed to session req.Session, if
// that session is active and runs a turn (handled false otherwise): the
// request becomes a pending approval of the session, of the pseudo-tool
// mcp__<server>__sampling, answered by Config.Approver or Runtime.Approve
// and denied when it expires; once allowed, the session's agent's model
// answers, and the answer and its usage are journaled in the session
// (SamplingAnswered) before the server gets it.
func (rt *Runtime) sessionSample(ctx context.Context, server string, req mcp.SampleRequest, args json.RawMessage) (mcp.SampleResult, bool, error) {
	n := rt.mcp.samplings.Add(1)
	id := cmp.Or(req.CallID, "mcp") + "/sampling-" + strconv.FormatUint(n, 10)
	tool := mcp.ToolName(server, "sampling")
	now := rt.clock.Now()
	w := &approvalWait{
		info: PendingApproval{Session: req.Session, CallID: id, Tool: tool, Permission: toolsys.PermExecute,
			Arguments: string(args), Reason: samplingReason(server), Requested: now, Expires: now.Add(mcpSampleApproval)},
		timeout: mcpSampleApproval,
		answer:  make(chan toolsys.Approval, 1),
	}
	reply := make(chan *agent, 1)
	ref := rt.postLive(req.Session, &samplingAskCmd{wait: w, reply: reply})
	if ref == nil {
		return mcp.SampleResult{}, false, nil
	}
	var ag *agent
	select {
	case ag = <-reply:
	case <-ref.done:
		return mcp.SampleResult{}, true, fmt.Errorf("%w: session %s stopped", mcp.ErrSamplingRefused, req.Session)
	case <-ctx.Done():
		return mcp.SampleResult{}, true, ctx.Err()
	}
	if ag == nil {
		return mcp.SampleResult{}, true, fmt.Errorf("%w: session %s runs no turn", mcp.ErrSamplingRefused, req.Session)
	}
	actx, cancel := context.WithTimeout(ctx, mcpSampleApproval)
	defer cancel()
	if rt.cfg.Approver != nil {
		go func() {
			ans, err := rt.cfg.Approver.Approve(actx, toolsys.ApprovalRequest{
				Request: toolsys.Request{Tool: tool, Permission: toolsys.PermExecute, Args: args, Subject: server,
					SessionID: req.Session, CallID: id},
				Reason: samplingReason(server), Timeout: mcpSampleApproval,
			})
			if actx.Err() != nil {
				return
			}
			m := &approverAnswer{wait: w, allow: ans.Allow, reason: ans.Reason}
			if err != nil {
				m.allow, m.reason = false, "approver failed: "+err.Error()
			}
			rt.system.Root.Send(ref.pid, m)
		}()
	}
	var ap toolsys.Approval
	select {
	case ap = <-w.answer:
	case <-actx.Done():
		done := make(chan error, 1)
		rt.postRef(ref, &approvalAnswerCmd{callID: id, reason: fmt.Sprintf("approval expired: no answer within %v", mcpSampleApproval),
			by: DecidedByRuntime, reply: done})
		select {
		case <-done:
		case <-ref.done:
		}
		select {
		case ap = <-w.answer:
		default:
			ap = toolsys.Approval{Reason: "approval expired"}
		}
	}
	if !ap.Allow {
		return mcp.SampleResult{}, true, fmt.Errorf("%w: %s", mcp.ErrSamplingRefused, ap.Reason)
	}
	p, model, err := rt.resolveModel(ag)
	if err != nil {
		return mcp.SampleResult{}, true, err
	}
	res, usage, err := sampleWith(ctx, server, p, model, req)
	if err != nil {
		return mcp.SampleResult{}, true, err
	}
	cost := rt.tracker.Record(res.Model, usage)
	recorded := make(chan struct{})
	rt.postRef(ref, &samplingDoneCmd{entry: messages.SamplingAnswered{Server: server, CallID: req.CallID,
		Request: samplingSummary(req), Text: res.Text, Model: res.Model, Usage: usage, Cost: cost}, reply: recorded})
	select {
	case <-recorded:
	case <-ref.done:
	}
	return res, true, nil
}

// samplingSummary summarises a request for the journal: how many messages,
// the token limit and the start of the last message.
func samplingSummary(req mcp.SampleRequest) string {
	last := ""
	if n := len(req.Messages); n > 0 {
		last = req.Messages[n-1].Text()
		if r := []rune(last); len(r) > 200 {
			last = string(r[:200]) + "…"
		}
	}
	return fmt.Sprintf("%d messages, max_tokens %d; last: %s", len(req.Messages), req.MaxTokens, last)
}
