package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/agcore/agcore/providers/mockllm"
	"github.com/agcore/agcore/providers/scripted"
)

// wire is an OpenAI-compatible endpoint on 127.0.0.1 (the mock LLM over a
// script) that records the JSON body of every chat completion request.
type wire struct {
	URL  string
	mu   sync.Mutex
	reqs []map[string]any
}

// startWire serves script and records the requests.
func startWire(t *testing.T, script string) *wire {
	t.Helper()
	s, err := scripted.ParseYAML([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	h := mockllm.NewHandler(mockllm.Config{Provider: scripted.MustNew(s, scripted.Options{})})
	w := &wire{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		var req map[string]any
		if json.Unmarshal(body, &req) == nil && req["messages"] != nil {
			w.mu.Lock()
			w.reqs = append(w.reqs, req)
			w.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	w.URL = srv.URL + "/v1"
	return w
}

// requests returns the chat completion requests received so far.
func (w *wire) requests() []map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]map[string]any(nil), w.reqs...)
}
