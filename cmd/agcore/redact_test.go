package main

import (
	"bytes"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/agcore/agcore/memory"
)

// TestRun_ProviderEchoingKeyLeaksNothing points agcore run at an endpoint
// that answers 401 with a body echoing the configured API key and a bearer
// header, and checks that neither reaches stdout, stderr or any file of
// the data directory.
func TestRun_ProviderEchoingKeyLeaksNothing(t *testing.T) {
	const apiKey = "custom-provider-key-0123456789" // no known shape: only the configuration names it
	const shaped = "sk-live-0123456789abcdefABCDEF"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided: ` + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") +
			`; also tried Authorization: Bearer ` + shaped + `","type":"invalid_request_error","code":"invalid_api_key"}}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	env := map[string]string{"OPENAI_API_KEY": apiKey, "OPENAI_BASE_URL": srv.URL + "/v1", "XDG_CONFIG_HOME": t.TempDir()}
	code, stdout, stderr := runCLI(t.Context(), t, env, "--data-dir", dir, "--log-level", "debug", "run", "--model", "openai/gpt-test", "hello")
	if code == exitOK {
		t.Fatalf("run succeeded against a 401:\n%s\n%s", stdout, stderr)
	}
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
		for _, secret := range []string{apiKey, shaped} {
			if strings.Contains(out, secret) {
				t.Errorf("%s holds %q:\n%s", name, secret, out)
			}
		}
	}
	if !strings.Contains(stdout+stderr, "401") && !strings.Contains(stdout+stderr, "authentication") {
		t.Errorf("the failure is not reported:\n%s\n%s", stdout, stderr)
	}
	storeHolds(t, dir, apiKey, shaped)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, secret := range []string{apiKey, shaped} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds %q", path, secret)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// storeHolds fails t if any key or value of the store in dir holds one of
// the secrets: unlike the files, whose blocks may be compressed, this sees
// every byte the store would give back.
func storeHolds(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	store, err := memory.Open(memory.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	n := 0
	err = store.DB().View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			for _, secret := range secrets {
				if bytes.Contains(it.Item().Key(), []byte(secret)) || bytes.Contains(v, []byte(secret)) {
					t.Errorf("store entry %q holds %q: %s", it.Item().Key(), secret, v)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("the store is empty: nothing was journaled")
	}
}
