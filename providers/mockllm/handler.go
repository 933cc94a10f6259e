package mockllm

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agcore/agcore/messages"
)

// handler serves the OpenAI-compatible API.
type handler struct {
	cfg Config
	mux *http.ServeMux
	ids atomic.Uint64 // for responses whose provider gives no id
}

// NewHandler returns the OpenAI-compatible API over cfg.Provider:
//
//	POST /v1/chat/completions   a completion, or an SSE stream when "stream" is true
//	GET  /v1/models             the models of cfg.Models
//	GET  /v1/models/{id}        one of them
//
// Provider errors are rendered as OpenAI error objects with the matching
// status (see the package documentation). It panics when cfg.Provider is
// nil.
func NewHandler(cfg Config) http.Handler {
	if cfg.Provider == nil {
		panic("mockllm: Config.Provider is required")
	}
	h := &handler{cfg: cfg.withDefaults(), mux: http.NewServeMux()}
	h.mux.HandleFunc("POST /v1/chat/completions", h.chat)
	h.mux.HandleFunc("GET /v1/models", h.models)
	h.mux.HandleFunc("GET /v1/models/{id}", h.model)
	h.mux.HandleFunc("/", h.notFound)
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cfg.APIKey != "" && !h.authorized(r) {
		newHTTPError(http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "",
			"Incorrect API key provided.").write(w)
		h.cfg.Logger.Debug().Str("method", r.Method).Str("path", r.URL.Path).Int("status", http.StatusUnauthorized).Msg("mockllm: request")
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *handler) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(h.cfg.APIKey)) == 1
}

func (h *handler) notFound(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/chat/completions":
		w.Header().Set("Allow", http.MethodPost)
	case "/v1/models":
		w.Header().Set("Allow", http.MethodGet)
	default:
		newHTTPError(http.StatusNotFound, "invalid_request_error", "unknown_url", "",
			fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)).write(w)
		return
	}
	newHTTPError(http.StatusMethodNotAllowed, "invalid_request_error", "method_not_supported", "",
		fmt.Sprintf("Method %s is not allowed for %s", r.Method, r.URL.Path)).write(w)
}

// modelObject is one entry of /v1/models.
type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (h *handler) modelList() []string {
	if len(h.cfg.Models) == 0 {
		return []string{DefaultModel}
	}
	return h.cfg.Models
}

func (h *handler) modelObject(id string) modelObject {
	return modelObject{ID: id, Object: "model", Created: h.cfg.Now().Unix(), OwnedBy: "agcore"}
}

func (h *handler) models(w http.ResponseWriter, _ *http.Request) {
	list := struct {
		Object string        `json:"object"`
		Data   []modelObject `json:"data"`
	}{Object: "list"}
	for _, id := range h.modelList() {
		list.Data = append(list.Data, h.modelObject(id))
	}
	writeJSON(w, list)
}

func (h *handler) model(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !slices.Contains(h.modelList(), id) {
		modelNotFound(id).write(w)
		return
	}
	writeJSON(w, h.modelObject(id))
}

func modelNotFound(id string) httpError {
	return newHTTPError(http.StatusNotFound, "invalid_request_error", "model_not_found", "model",
		fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", id))
}

func (h *handler) chat(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	status, stream, model := h.serveChat(w, r)
	h.cfg.Logger.Debug().Str("method", r.Method).Str("path", r.URL.Path).Str("model", model).
		Bool("stream", stream).Int("status", status).Dur("took", time.Since(start)).Msg("mockllm: request")
}

// serveChat answers a chat completion and returns the status sent, whether
// it streamed, and the model asked for.
func (h *handler) serveChat(w http.ResponseWriter, r *http.Request) (int, bool, string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		e := newHTTPError(http.StatusBadRequest, "invalid_request_error", "", "", "cannot read the request body: "+err.Error())
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			e = newHTTPError(http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large", "",
				fmt.Sprintf("the request body exceeds %d bytes", mbe.Limit))
		}
		e.write(w)
		return e.status, false, ""
	}
	cr, req, err := decodeRequest(body)
	if err != nil {
		var re *requestError
		errors.As(err, &re)
		e := newHTTPError(http.StatusBadRequest, "invalid_request_error", "", re.param, err.Error())
		e.write(w)
		return e.status, cr.Stream, cr.Model
	}
	if len(h.cfg.Models) > 0 && !slices.Contains(h.cfg.Models, cr.Model) {
		e := modelNotFound(cr.Model)
		e.write(w)
		return e.status, cr.Stream, cr.Model
	}
	if cr.Stream {
		includeUsage := cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage
		return h.stream(w, r, req, includeUsage), true, cr.Model
	}
	resp, err := h.cfg.Provider.Chat(r.Context(), req)
	if err != nil {
		if r.Context().Err() != nil {
			return 499, false, cr.Model // the client is gone; nobody reads an answer
		}
		e := errorFor(err)
		e.write(w)
		return e.status, false, cr.Model
	}
	writeJSON(w, h.completion(req, resp))
	return http.StatusOK, false, cr.Model
}

// completion renders resp as a chat.completion object.
func (h *handler) completion(req messages.Request, resp *messages.Response) chatResponse {
	out := outMessage{Role: messages.RoleAssistant}
	if text := resp.Message.Text(); text != "" || len(resp.Message.ToolCalls) == 0 {
		out.Content = &text
	}
	if resp.Message.Refusal != "" {
		out.Refusal = &resp.Message.Refusal
	}
	for _, c := range resp.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, wireToolCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	finish := string(resp.FinishReason)
	if finish == "" {
		finish = string(messages.FinishStop)
	}
	return chatResponse{
		ID:      h.idOf(resp.ID),
		Object:  "chat.completion",
		Created: h.cfg.Now().Unix(),
		Model:   cmp.Or(resp.Model, req.Model),
		Choices: []choice{{Index: 0, Message: out, FinishReason: finish}},
		Usage:   usageOf(resp.Usage),
	}
}

// idOf returns id, or a fresh one when the provider gave none.
func (h *handler) idOf(id string) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("chatcmpl-mock-%d", h.ids.Add(1))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
