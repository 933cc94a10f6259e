package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"
	oai "github.com/sashabaranov/go-openai"

	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers"
	"github.com/agcore/agcore/redact"
)

// Provider is a providers.Provider for an OpenAI-compatible endpoint. It is
// safe for concurrent use.
//
// Chat and Stream retry failed calls as Options.Retry says. A Provider is a
// providers.Retrier: actors.Runtime calls its SingleAttempt and retries
// model calls itself, with its own Config.Retry, so that a call made
// through the runtime is retried by one layer only.
type Provider struct {
	api   *api
	inner providers.Provider // api, wrapped by the retry policy
}

var _ providers.Retrier = (*Provider)(nil)

// api makes single attempts; Provider retries them.
type api struct {
	name, baseURL, model string
	// chatURL is where requests go; authorization and organization are
	// the values of the headers that carry Options.APIKey and
	// Options.Organization, empty when those are.
	chatURL, authorization, organization string
	http                                 *http.Client
	timeout                              time.Duration
	log                                  zerolog.Logger
	now                                  func() time.Time
	redactor                             *redact.Redactor
	// readers are the read buffers of streamed replies, reused from one
	// reply to the next.
	readers readerPool
	// bodies are the buffers requests are encoded into.
	bodies bodyPool
}

var _ providers.Provider = (*api)(nil)

// New returns a Provider configured by opts; see Options for the defaults.
// It fails when BaseURL is not an http or https URL.
func New(opts Options) (*Provider, error) {
	base := opts.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil {
		// The parse error quotes the URL, which may hold a password.
		return nil, errors.New("openai: Options.BaseURL is not a valid URL")
	}
	if u.User != nil {
		return nil, fmt.Errorf("openai: Options.BaseURL %q must not carry credentials; use Options.APIKey", u.Redacted())
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: Options.BaseURL %q: want an http or https URL", u.Redacted())
	}
	base = strings.TrimRight(base, "/")
	hc := opts.HTTPClient
	if hc == nil {
		dial := opts.DialTimeout
		if dial == 0 {
			dial = DefaultDialTimeout
		}
		hc = newHTTPClient(dial)
	}
	a := &api{
		name:         opts.Name,
		baseURL:      base,
		model:        opts.Model,
		chatURL:      base + "/chat/completions",
		organization: opts.Organization,
		http:         hc,
		timeout:      opts.Timeout,
		log:          opts.Logger,
		now:          opts.Now,
		redactor:     opts.Redactor,
	}
	if a.redactor == nil {
		a.redactor = redact.New()
	}
	a.redactor.Add(opts.APIKey, "")
	if opts.APIKey != "" {
		a.authorization = "Bearer " + opts.APIKey
	}
	if a.name == "" {
		a.name = DefaultName
	}
	if a.timeout == 0 {
		a.timeout = DefaultTimeout
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.log = a.log.With().Str("provider", a.name).Str("base_url", base).Logger()

	var policy providers.RetryPolicy
	if opts.Retry != nil {
		policy = *opts.Retry
	}
	userHook := policy.OnRetry
	policy.OnRetry = func(attempt int, err error, delay time.Duration) {
		a.log.Debug().Int("retry", attempt).Dur("delay", delay).
			Stringer("kind", providers.KindOf(err)).Err(err).Msg("retrying")
		if userHook != nil {
			userHook(attempt, err, delay)
		}
	}
	return &Provider{api: a, inner: providers.WithRetry(a, policy)}, nil
}

// Name returns the provider's name (Options.Name, or "openai").
func (p *Provider) Name() string { return p.api.name }

// Model returns the default model (Options.Model).
func (p *Provider) Model() string { return p.api.model }

// BaseURL returns the API root requests are sent under.
func (p *Provider) BaseURL() string { return p.api.baseURL }

// SingleAttempt implements providers.Retrier: it returns the provider
// without its retry layer, whose Chat and Stream make one attempt each.
func (p *Provider) SingleAttempt() providers.Provider { return p.api }

// Chat implements providers.Provider: it sends req and returns the first
// choice of the reply, retrying as Options.Retry says. Errors are
// *providers.Error.
func (p *Provider) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	return p.inner.Chat(ctx, req)
}

// Stream implements providers.Provider: it sends req with streaming on and
// returns the reply chunk by chunk, retrying as Options.Retry says until the
// first chunk arrives. Errors are *providers.Error.
func (p *Provider) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	return p.inner.Stream(ctx, req)
}

// badRequest reports a request this provider cannot send.
func (a *api) badRequest(err error) error {
	return &providers.Error{Kind: providers.KindBadRequest, Provider: a.name, Message: err.Error(), Err: err}
}

// encode writes the request body for req into a pooled buffer, or
// reports why the request cannot be sent.
func (a *api) encode(req messages.Request, stream bool) (*requestBody, string, error) {
	model := req.Model
	if model == "" {
		model = a.model
	}
	b := a.bodies.get()
	buf, err := appendRequest(b.buf, req, a.model, stream)
	b.buf = buf
	if err != nil {
		b.release()
		return nil, model, a.badRequest(err)
	}
	return b, model, nil
}

// Chat makes one attempt.
func (a *api) Chat(ctx context.Context, req messages.Request) (*messages.Response, error) {
	body, model, err := a.encode(req, false)
	if err != nil {
		return nil, err
	}
	if a.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.timeout)
		defer cancel()
	}
	x := &exchange{}
	start := time.Now()
	var resp *http.Response
	if completionOnly(model) {
		body.release()
		err = oai.ErrChatCompletionInvalidModel
	} else {
		resp, err = a.post(ctx, body, false, x)
	}
	var out oai.ChatCompletionResponse
	if err == nil {
		err = json.NewDecoder(resp.Body).Decode(&out)
		_ = resp.Body.Close()
	}
	if err != nil {
		err = a.classify(ctx, err, x)
	}
	a.logAttempt(ctx, model, false, x, start, err)
	if err != nil {
		return nil, err
	}
	return fromResponse(out), nil
}

// Stream makes one attempt at opening a stream.
func (a *api) Stream(ctx context.Context, req messages.Request) (providers.Stream, error) {
	body, model, err := a.encode(req, true)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancelCause(ctx)
	var idle *time.Timer
	if a.timeout > 0 {
		idle = time.AfterFunc(a.timeout, func() { cancel(ErrIdle) })
	}
	x := &exchange{}
	start := time.Now()
	var resp *http.Response
	if completionOnly(model) {
		body.release()
		err = oai.ErrChatCompletionInvalidModel
	} else {
		resp, err = a.post(sctx, body, true, x)
	}
	if err != nil {
		err = a.classify(sctx, err, x)
		if idle != nil {
			idle.Stop()
		}
		cancel(context.Canceled)
		a.logAttempt(ctx, model, true, x, start, err)
		return nil, err
	}
	a.logAttempt(ctx, model, true, x, start, nil)
	return newStream(a, sctx, cancel, resp.Body, idle), nil
}

func (a *api) logAttempt(ctx context.Context, model string, stream bool, x *exchange, start time.Time, err error) {
	if a.log.GetLevel() > zerolog.DebugLevel {
		return
	}
	ev := a.log.Debug().Str("model", model).Bool("stream", stream).
		Int("attempt", providers.Attempt(ctx)).Dur("duration", time.Since(start))
	if x.resp != nil {
		ev = ev.Int("status", x.resp.StatusCode)
	}
	if err != nil {
		ev = ev.Stringer("kind", providers.KindOf(err)).Err(err)
	}
	ev.Msg("chat completion")
}
