package mcp_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/agcore/agcore/toolsys/mcp"
)

// FuzzCallbackResult feeds the redirect listener's callback any query, as
// any local program or web page could: only a query with exactly the
// awaited state and a code yields a result, and that result holds the
// awaited state.
func FuzzCallbackResult(f *testing.F) {
	f.Add("code=abc&state=s1", "s1")
	f.Add("code=abc&state=s2", "s1")
	f.Add("state=s1&error=access_denied&error_description=no", "s1")
	f.Add("code=abc&state=s1&state=s2&iss=https%3A%2F%2Fas", "s1")
	f.Add("code=&state=", "")
	f.Add("%zz", "s1")
	f.Fuzz(func(t *testing.T, rawQuery, state string) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		res, err := mcp.CallbackResult(q, state)
		if q.Get("state") != state || state == "" {
			if !errors.Is(err, mcp.ErrForeignCallback) {
				t.Fatalf("a callback with state %q was taken for %q: %+v, %v", q.Get("state"), state, res, err)
			}
			return
		}
		if err == nil && (res.State != state || res.Code == "" || res.Code != q.Get("code")) {
			t.Fatalf("result %+v for query %q and state %q", res, rawQuery, state)
		}
	})
}
