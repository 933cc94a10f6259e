// Command embed-service embeds the agcore runtime in an HTTP service.
//
// The service has two handlers:
//
//	POST /sessions/{id}/messages  {"text": "..."}
//	    runs a turn. With "Accept: text/event-stream" the turn's events are
//	    streamed as Server-Sent Events as they happen (event: <type>,
//	    data: <JSON>); otherwise the reply is the turn's result as JSON.
//	GET /sessions/{id}
//	    returns the session's status: turns, history length, usage.
//
// By default the program starts the service on a free loopback port, talks
// to it as a client would (one streamed turn, one JSON turn, the status, a
// malformed request), prints what it sends and receives, and shuts down
// gracefully. With -addr it serves until interrupted instead:
//
//	go run ./examples/embed-service
//	go run ./examples/embed-service -addr 127.0.0.1:8080
//	curl -N -H 'Accept: text/event-stream' -d '{"text":"how many A-100 in stock?"}' \
//	    http://127.0.0.1:8080/sessions/demo/messages
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

func main() {
	addr := flag.String("addr", "", "serve on this address until interrupted, instead of running the demo client")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if *addr != "" {
		err = serve(ctx, *addr, os.Stdout)
	} else {
		err = run(ctx, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed-service:", err)
		os.Exit(1)
	}
}

// maxBodyBytes bounds a request body.
const maxBodyBytes = 64 << 10

// service is the HTTP front of a runtime.
type service struct {
	rt *actors.Runtime
}

// handler routes the service's endpoints.
func (s *service) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sessions/{id}/messages", s.postMessage)
	mux.HandleFunc("GET /sessions/{id}", s.getSession)
	return mux
}

// messageRequest is the body of POST /sessions/{id}/messages.
type messageRequest struct {
	Text string `json:"text"`
}

func (s *service) postMessage(w http.ResponseWriter, r *http.Request) {
	var req messageRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		status := http.StatusBadRequest
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, "malformed body: "+err.Error())
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		writeError(w, http.StatusBadRequest, `"text" is required`)
		return
	}
	sess, ok := s.open(w, r)
	if !ok {
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		s.stream(w, r, sess, req.Text)
		return
	}
	res, err := sess.Submit(r.Context(), messages.UserText(req.Text))
	var te *actors.TurnError
	if err != nil && !errors.As(err, &te) {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// stream runs the turn and writes each of its events as an SSE event. The
// stream ends with the turn_ended event. A client that goes away stops the
// stream, not the turn.
func (s *service) stream(w http.ResponseWriter, r *http.Request, sess *actors.Session, text string) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for ev, err := range sess.Stream(r.Context(), messages.UserText(text)) {
		var (
			typ  string
			data []byte
		)
		if err != nil {
			typ = "error"
			data, _ = json.Marshal(map[string]string{"message": err.Error()})
		} else if data, err = json.Marshal(ev); err == nil {
			typ = ev.EventType()
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

func (s *service) getSession(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.open(w, r)
	if !ok {
		return
	}
	st, err := sess.Status(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// open returns the session named in the path, or answers with an error.
func (s *service) open(w http.ResponseWriter, r *http.Request) (*actors.Session, bool) {
	sess, err := s.rt.Open(r.Context(), r.PathValue("id"))
	switch {
	case errors.Is(err, memory.ErrInvalidSession):
		writeError(w, http.StatusBadRequest, err.Error())
		return nil, false
	case errors.Is(err, actors.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return nil, false
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return nil, false
	}
	return sess, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// StockParams are the arguments of stock_level.
type StockParams struct {
	SKU string `json:"sku" jsonschema:"description=The article number"`
}

// StockLevel reports how many units of an article the warehouse holds.
type StockLevel struct{ levels map[string]int }

// Name implements toolsys.Typed.
func (StockLevel) Name() string { return "stock_level" }

// Description implements toolsys.Typed.
func (StockLevel) Description() string { return "Returns the number of units of an article in stock." }

// Permission implements toolsys.Typed.
func (StockLevel) Permission() toolsys.Permission { return toolsys.PermReadOnly }

// SecretParams implements toolsys.Typed.
func (StockLevel) SecretParams() []string { return nil }

// Execute implements toolsys.Typed.
func (s StockLevel) Execute(_ context.Context, p StockParams, _ *toolsys.Context) (toolsys.Result, error) {
	n, ok := s.levels[p.SKU]
	if !ok {
		return toolsys.ErrorResult("unknown article %q", p.SKU), nil
	}
	return toolsys.Result{Content: fmt.Sprintf("%d units of %s", n, p.SKU)}, nil
}

// newRuntime starts an in-memory runtime with a scripted model that looks
// stock levels up.
func newRuntime() (*actors.Runtime, error) {
	model, err := scripted.New(scripted.Script{Stateless: true, Rules: []scripted.Rule{
		{Match: scripted.Match{Role: messages.RoleUser, Contains: "stock"}, Reply: scripted.Reply{
			Text:      "Checking the warehouse.",
			ToolCalls: []scripted.ToolCall{{Name: "stock_level", Arguments: `{"sku":"A-100"}`}},
		}},
		{Match: scripted.Match{Tool: "stock_level"}, Reply: scripted.Reply{Text: "There are 42 units of A-100 in stock."}},
		{Match: scripted.Match{Role: messages.RoleUser}, Reply: scripted.Reply{Text: "Hello! Ask me about stock levels."}},
	}}, scripted.Options{ChunkSize: 12})
	if err != nil {
		return nil, err
	}
	reg := toolsys.NewRegistry(toolsys.Config{})
	if err := toolsys.RegisterTyped[StockParams](reg, StockLevel{levels: map[string]int{"A-100": 42}}); err != nil {
		return nil, err
	}
	return actors.NewInMemory(actors.Config{Provider: model, Tools: reg})
}

// serve runs the service on addr until ctx ends.
func serve(ctx context.Context, addr string, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "serving on http://%s (Ctrl-C to stop)\n", ln.Addr())
	return listenAndServe(ctx, ln, func(context.Context, string) error {
		<-ctx.Done()
		return nil
	})
}

// listenAndServe serves the service on ln while use runs with the base
// URL, then shuts the server and the runtime down gracefully: requests in
// flight complete, then the turns in flight, within ten seconds.
func listenAndServe(ctx context.Context, ln net.Listener, use func(ctx context.Context, baseURL string) error) (err error) {
	rt, err := newRuntime()
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{Handler: (&service{rt: rt}).handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	err = use(ctx, "http://"+ln.Addr().String())

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err = errors.Join(err, srv.Shutdown(sctx))
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return errors.Join(err, rt.Shutdown(sctx))
}

// run starts the service on a free loopback port and acts as its client.
func run(ctx context.Context, out io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	return listenAndServe(ctx, ln, func(ctx context.Context, base string) error {
		fmt.Fprintf(out, "== service listening on %s\n", base)
		c := &client{base: base, out: out}
		return errors.Join(
			c.streamTurn(ctx, "shop-1", "How many A-100 are in stock?"),
			c.jsonTurn(ctx, "shop-1", "Hello there"),
			c.status(ctx, "shop-1"),
			c.malformed(ctx, "shop-1"),
		)
	})
}

// client is the demo's HTTP client.
type client struct {
	base string
	out  io.Writer
}

func (c *client) post(ctx context.Context, session, body, accept string) (*http.Response, error) {
	url := c.base + "/sessions/" + session + "/messages"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	fmt.Fprintf(c.out, "\n> POST /sessions/%s/messages %s\n", session, body)
	if accept != "" {
		fmt.Fprintf(c.out, "> Accept: %s\n", accept)
	}
	return http.DefaultClient.Do(req)
}

// streamTurn posts a message and prints the SSE events as they arrive.
func (c *client) streamTurn(ctx context.Context, session, text string) error {
	body, _ := json.Marshal(messageRequest{Text: text})
	resp, err := c.post(ctx, session, string(body), "text/event-stream")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	fmt.Fprintf(c.out, "< %s %s\n", resp.Status, resp.Header.Get("Content-Type"))
	var typ string
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			fmt.Fprintf(c.out, "< event %-14s %s\n", typ, summarise(typ, []byte(strings.TrimPrefix(line, "data: "))))
		}
	}
	return nil
}

// summarise picks the interesting fields of an event's data.
func summarise(typ string, data []byte) string {
	var f struct {
		Text    string `json:"text"`
		Name    string `json:"name"`
		Args    string `json:"arguments"`
		Content string `json:"content"`
		Outcome string `json:"outcome"`
		Turn    int    `json:"turn"`
		Message string `json:"message"`
		Usage   struct {
			Total int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return string(data)
	}
	switch typ {
	case "turn_started":
		return fmt.Sprintf("turn %d", f.Turn)
	case "text_delta":
		return fmt.Sprintf("%q", f.Text)
	case "tool_started":
		return f.Name + " " + f.Args
	case "tool_finished":
		return f.Name + " -> " + f.Content
	case "usage":
		return fmt.Sprintf("%d tokens", f.Usage.Total)
	case "turn_ended":
		return fmt.Sprintf("%s: %q", f.Outcome, f.Text)
	case "error":
		return f.Message
	}
	return string(data)
}

// jsonTurn posts a message and prints the JSON result.
func (c *client) jsonTurn(ctx context.Context, session, text string) error {
	body, _ := json.Marshal(messageRequest{Text: text})
	resp, err := c.post(ctx, session, string(body), "")
	if err != nil {
		return err
	}
	return c.printJSON(resp, "session", "turn", "outcome", "text", "round_trips")
}

func (c *client) status(ctx context.Context, session string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/sessions/"+session, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.out, "\n> GET /sessions/%s\n", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return c.printJSON(resp, "session", "agent", "next_turn", "running", "messages", "usage")
}

func (c *client) malformed(ctx context.Context, session string) error {
	resp, err := c.post(ctx, session, `{"txt": "typo"}`, "")
	if err != nil {
		return err
	}
	return c.printJSON(resp, "error")
}

// printJSON prints the status and the named fields of a JSON response, in
// that order.
func (c *client) printJSON(resp *http.Response, fields ...string) error {
	defer resp.Body.Close()
	var m map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return fmt.Errorf("%s: decoding the reply: %w", resp.Request.URL.Path, err)
	}
	var b bytes.Buffer
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %s", f, m[f])
	}
	fmt.Fprintf(c.out, "< %s {%s}\n", resp.Status, b.String())
	return nil
}
