package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"mime"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/messages"
)

// docURL is where the tests load the OpenAPI document as a JSON Schema
// resource, so that its $refs resolve within it.
const docURL = "https://agcore.test/openapi.json"

// openAPIDoc is the served document, parsed.
type openAPIDoc struct {
	raw  map[string]any
	c    *jsonschema.Compiler
	seen map[string]*jsonschema.Schema
}

func loadOpenAPI(t *testing.T) *openAPIDoc {
	t.Helper()
	b, err := httpapi.OpenAPI()
	if err != nil {
		t.Fatalf("OpenAPI: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	raw, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("the document is a %T, not an object", v)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, raw); err != nil {
		t.Fatal(err)
	}
	return &openAPIDoc{raw: raw, c: c, seen: map[string]*jsonschema.Schema{}}
}

// schema compiles the schema at the JSON pointer ptr ("#/components/...").
func (d *openAPIDoc) schema(t *testing.T, ptr string) *jsonschema.Schema {
	t.Helper()
	if s, ok := d.seen[ptr]; ok {
		return s
	}
	s, err := d.c.Compile(docURL + ptr)
	if err != nil {
		t.Fatalf("compiling %s: %v", ptr, err)
	}
	d.seen[ptr] = s
	return s
}

// operations returns the document's operations by "METHOD path".
func (d *openAPIDoc) operations(t *testing.T) map[string]map[string]any {
	t.Helper()
	paths, ok := d.raw["paths"].(map[string]any)
	if !ok {
		t.Fatal("the document has no paths")
	}
	out := map[string]map[string]any{}
	for path, item := range paths {
		for method, op := range item.(map[string]any) {
			out[strings.ToUpper(method)+" "+path] = op.(map[string]any)
		}
	}
	return out
}

// escape escapes a JSON pointer token.
func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// responsePointer returns the pointer of the documented response of op
// ("GET /healthz") with status.
func responsePointer(op string, status int) string {
	method, path, _ := strings.Cut(op, " ")
	return "#/paths/" + escape(path) + "/" + strings.ToLower(method) + "/responses/" + strconv.Itoa(status)
}

// lookup returns the value at the JSON pointer ptr, or nil.
func (d *openAPIDoc) lookup(ptr string) any {
	var cur any = d.raw
	for tok := range strings.SplitSeq(strings.TrimPrefix(ptr, "#/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		if cur, ok = m[tok]; !ok {
			return nil
		}
	}
	return cur
}

func TestOpenAPI_Served(t *testing.T) {
	want, err := httpapi.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{script: exploreScript(), token: "s3cret"})
	resp, body := e.do("GET", "/v1/openapi.json", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/openapi.json: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !bytes.Equal(body, want) {
		t.Error("the served document differs from OpenAPI()")
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(doc.OpenAPI) {
		t.Errorf("openapi = %q (%v), want 3.1.x", doc.OpenAPI, err)
	}
	resp, body = e.do("GET", "/v1/openapi.json", "", "Authorization", "")
	if resp.StatusCode != http.StatusUnauthorized || bytes.Contains(body, []byte(`"openapi"`)) {
		t.Errorf("without the token: %d %.80s", resp.StatusCode, body)
	}

	open := newEnv(t, envOptions{script: exploreScript()})
	if resp, body := open.do("GET", "/v1/openapi.json", ""); resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
		t.Errorf("a server without a token: %d", resp.StatusCode)
	}
}

func TestOpenAPI_ValidDocument(t *testing.T) {
	d := loadOpenAPI(t)

	// The document is an OpenAPI 3.1 document, by the specification's own
	// schema.
	f, err := os.Open("testdata/oas31/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	oas, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("https://spec.openapis.org/oas/3.1/schema/2022-10-07", oas); err != nil {
		t.Fatal(err)
	}
	spec, err := c.Compile("https://spec.openapis.org/oas/3.1/schema/2022-10-07")
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Validate(d.raw); err != nil {
		t.Fatalf("the document is not a valid OpenAPI 3.1 document: %v", err)
	}

	// Every $ref resolves within the document.
	var refs int
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "$ref" {
					refs++
					if !strings.HasPrefix(s, "#/") || d.lookup(s) == nil {
						t.Errorf("%s: $ref %q does not resolve", ptr, s)
					}
					continue
				}
				walk(ptr+"/"+escape(k), x)
			}
		case []any:
			for i, x := range v {
				walk(ptr+"/"+strconv.Itoa(i), x)
			}
		}
	}
	walk("#", d.raw)
	if refs == 0 {
		t.Error("the document has no $ref: the schemas are not shared")
	}

	// Every component schema is a valid JSON Schema 2020-12.
	schemas, _ := d.lookup("#/components/schemas").(map[string]any)
	if len(schemas) == 0 {
		t.Fatal("no component schemas")
	}
	for name := range schemas {
		d.schema(t, "#/components/schemas/"+escape(name))
	}

	// Every operation has a unique id, a success response and a
	// description of each of its responses, and declares each parameter
	// of its path.
	ids := map[string]string{}
	for key, op := range d.operations(t) {
		id, _ := op["operationId"].(string)
		if other, dup := ids[id]; id == "" || dup {
			t.Errorf("%s: operationId %q (also %s)", key, id, other)
		}
		ids[id] = key
		responses, _ := op["responses"].(map[string]any)
		ok2xx := false
		for status, r := range responses {
			ok2xx = ok2xx || strings.HasPrefix(status, "2")
			resp, _ := r.(map[string]any)
			if desc, _ := resp["description"].(string); desc == "" {
				t.Errorf("%s: response %s has no description", key, status)
			}
		}
		if !ok2xx {
			t.Errorf("%s: no success response in %v", key, slices.Collect(maps.Keys(responses)))
		}
		var declared []string
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			pm := p.(map[string]any)
			if r, ok := pm["$ref"].(string); ok {
				pm, _ = d.lookup(r).(map[string]any)
			}
			if pm["in"] == "path" {
				declared = append(declared, pm["name"].(string))
			}
		}
		var inPath []string
		for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(key, -1) {
			inPath = append(inPath, m[1])
		}
		slices.Sort(declared)
		slices.Sort(inPath)
		if !slices.Equal(declared, inPath) {
			t.Errorf("%s: path parameters %v, declared %v", key, inPath, declared)
		}
	}
}

func TestOpenAPI_RoutesMatchServer(t *testing.T) {
	d := loadOpenAPI(t)
	e := newEnv(t, envOptions{script: exploreScript()})
	documented := slices.Sorted(maps.Keys(d.operations(t)))
	registered := slices.Sorted(slices.Values(httpapi.RoutePatterns()))
	if !slices.Equal(documented, registered) {
		t.Fatalf("documented routes %v\nregistered routes %v", documented, registered)
	}

	// The server's mux serves exactly the documented method and path
	// pairs: every documented one with its own pattern, and any other
	// method on a documented path with the fallback.
	paths := map[string][]string{}
	for _, op := range documented {
		method, path, _ := strings.Cut(op, " ")
		paths[path] = append(paths[path], method)
	}
	fill := strings.NewReplacer("{id}", "s1", "{call_id}", "c1")
	for path, methods := range paths {
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			req, err := http.NewRequest(m, "http://"+hostOf(e)+fill.Replace(path), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := "/"
			if slices.Contains(methods, m) {
				want = m + " " + path
			}
			if got := e.srv.MatchedPattern(req); got != want {
				t.Errorf("%s %s is served by %q, want %q", m, path, got, want)
			}
		}
	}
}

// TestOpenAPI_ErrorCodes checks that the document's ErrorCode lists every
// Code constant of errors.go.
func TestOpenAPI_ErrorCodes(t *testing.T) {
	d := loadOpenAPI(t)
	enum, _ := d.lookup("#/components/schemas/ErrorCode/enum").([]any)
	var documented []string
	for _, c := range enum {
		documented = append(documented, c.(string))
	}
	declared := stringConsts(t, "errors.go", func(name string) bool { return strings.HasPrefix(name, "Code") })
	slices.Sort(documented)
	slices.Sort(declared)
	if len(declared) == 0 || !slices.Equal(documented, declared) {
		t.Errorf("ErrorCode enum %v\nCode constants %v", documented, declared)
	}
}

// TestOpenAPI_StreamEvents checks that the streams document every event
// type of the messages package, and stream_error.
func TestOpenAPI_StreamEvents(t *testing.T) {
	d := loadOpenAPI(t)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../../messages/events.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{httpapi.StreamErrorEvent}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "EventType" || fn.Body == nil || len(fn.Body.List) != 1 {
			continue
		}
		if ret, ok := fn.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
			if lit, ok := ret.Results[0].(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				want = append(want, s)
			}
		}
	}
	slices.Sort(want)
	for _, op := range []string{"POST /v1/sessions/{id}/turns", "GET /v1/sessions/{id}/events"} {
		events, _ := d.lookup(responsePointer(op, 200) + "/content/text~1event-stream/x-events").(map[string]any)
		if got := slices.Sorted(maps.Keys(events)); !slices.Equal(got, want) {
			t.Errorf("%s: events %v\nwant %v", op, got, want)
		}
	}
}

// stringConsts returns the names of the string constants of file whose
// name keep accepts, with their values.
func stringConsts(t *testing.T, file string, keep func(string) bool) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !keep(name.Name) || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// mediaType returns the media type of resp, without parameters.
func mediaType(t *testing.T, resp *http.Response) string {
	t.Helper()
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		t.Fatalf("Content-Type %q: %v", ct, err)
	}
	return mt
}

// conformance checks responses against the document, and remembers which
// documented responses were seen.
type conformance struct {
	t       *testing.T
	d       *openAPIDoc
	e       *env
	covered map[string]bool // "op status media"
}

// response checks that the status and media type of resp are documented
// for op ("GET /healthz"), and returns the pointer of the documented media
// type, "" when the response has no body.
func (c *conformance) response(op string, resp *http.Response) string {
	t := c.t
	t.Helper()
	ptr := responsePointer(op, resp.StatusCode)
	if c.d.lookup(ptr) == nil {
		t.Fatalf("%s: status %d is not documented", op, resp.StatusCode)
	}
	mt := mediaType(t, resp)
	content, _ := c.d.lookup(ptr + "/content").(map[string]any)
	c.covered[fmt.Sprintf("%s %d %s", op, resp.StatusCode, mt)] = true
	if mt == "" || resp.StatusCode == http.StatusNoContent {
		if len(content) != 0 {
			t.Errorf("%s %d: no body, but the document describes %v", op, resp.StatusCode, slices.Collect(maps.Keys(content)))
		}
		return ""
	}
	if _, ok := content[mt]; !ok {
		t.Fatalf("%s %d: media type %s is not documented", op, resp.StatusCode, mt)
	}
	return ptr + "/content/" + escape(mt)
}

// frame validates the data of an event-stream frame against the schema
// the media type at mptr documents for its event.
func (c *conformance) frame(mptr string, f frame) {
	c.t.Helper()
	ref, _ := c.d.lookup(mptr + "/x-events/" + escape(f.Event) + "/$ref").(string)
	if ref == "" {
		c.t.Errorf("%s: event %q is not documented", mptr, f.Event)
		return
	}
	c.validate("event "+f.Event, ref, []byte(f.Data))
}

// check sends a request for op, wants status, and checks the response
// against the document: the body (JSON, or each frame of an event stream)
// validates against the documented schema. It returns the body, or the
// stream's data lines.
func (c *conformance) check(op string, status int, method, path, body string, header ...string) []byte {
	t := c.t
	t.Helper()
	resp := c.e.send(method, path, body, header...)
	defer resp.Body.Close()
	if resp.StatusCode != status {
		b := new(bytes.Buffer)
		_, _ = b.ReadFrom(resp.Body)
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, status, b)
	}
	c.request(op, resp.StatusCode, body)
	mptr := c.response(op, resp)
	switch mt := mediaType(t, resp); {
	case mptr == "":
		return nil
	case mt == "text/event-stream":
		var out bytes.Buffer
		for _, f := range newSSEReader(resp.Body).rest(t) {
			c.frame(mptr, f)
			fmt.Fprintf(&out, "%s\n", f.Data)
		}
		return out.Bytes()
	default:
		b := new(bytes.Buffer)
		if _, err := b.ReadFrom(resp.Body); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(mt, "text/") {
			c.validate(fmt.Sprintf("%s %d", op, status), mptr+"/schema", b.Bytes())
		}
		return b.Bytes()
	}
}

// request checks the JSON body of a request for op against the documented
// request body: the server answered status, so the body must validate when
// the status is a success, and must not when it is a 400.
func (c *conformance) request(op string, status int, body string) {
	c.t.Helper()
	method, path, _ := strings.Cut(op, " ")
	ptr := "#/paths/" + escape(path) + "/" + strings.ToLower(method) + "/requestBody/content/application~1json/schema"
	if body == "" || c.d.lookup(ptr) == nil {
		return
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(body))
	valid := err == nil && c.d.schema(c.t, ptr).Validate(v) == nil
	switch {
	case status < 300 && !valid:
		c.t.Errorf("%s: the server accepted a body the document refuses: %.200s", op, body)
	case status == http.StatusBadRequest && valid:
		c.t.Errorf("%s: the server refused a body the document accepts: %.200s", op, body)
	}
}

// validate checks the JSON data against the schema at ptr.
func (c *conformance) validate(what, ptr string, data []byte) {
	c.t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		c.t.Errorf("%s: the body is not JSON: %v: %.200s", what, err, data)
		return
	}
	if err := c.d.schema(c.t, ptr).Validate(v); err != nil {
		c.t.Errorf("%s: the body does not match the documented schema %s: %v\n%s", what, ptr, err, data)
	}
}

// TestOpenAPI_ResponsesMatchSchemas calls every route on a server and
// validates each response against the schema the document gives for its
// route, status and media type. Every documented success response is
// exercised, and errors of most codes are.
func TestOpenAPI_ResponsesMatchSchemas(t *testing.T) {
	d := loadOpenAPI(t)
	schedules := newSchedules(t)
	ask := newAsker(t)
	e := newEnv(t, envOptions{script: exploreScript(), token: "s3cret", maxBody: 4096, config: func(c *httpapi.Config) {
		withSchedules(schedules)(c)
		withAuthorizations(fakeAuthorizations{{Server: "github", URL: "https://as.example/authorize?state=x",
			RedirectURL: "http://127.0.0.1:43123/callback"}})(c)
	}, mcp: []mcpConfig{ask.config()}})
	c := &conformance{t: t, d: d, e: e, covered: map[string]bool{}}
	const (
		create   = "POST /v1/sessions"
		turns    = "POST /v1/sessions/{id}/turns"
		events   = "GET /v1/sessions/{id}/events"
		answer   = "POST /v1/sessions/{id}/approvals/{call_id}"
		sessions = "GET /v1/sessions"
	)

	c.check("GET /healthz", 200, "GET", "/healthz", "")
	c.check("GET /readyz", 200, "GET", "/readyz", "")
	c.check("GET /v1/openapi.json", 200, "GET", "/v1/openapi.json", "")
	c.check(create, 201, "POST", "/v1/sessions", `{"id":"s1"}`)
	c.check(create, 201, "POST", "/v1/sessions", "")

	// A watch stream, registered once it has delivered a frame.
	watch := e.send("GET", "/v1/sessions/s1/events", "")
	defer watch.Body.Close()
	watchPtr := c.response(events, watch)
	watched := make(chan frame)
	go func() {
		defer close(watched)
		sse := newSSEReader(watch.Body)
		for {
			f, err := sse.next()
			if err != nil {
				return
			}
			watched <- f
		}
	}()
	var seen []frame
	for len(seen) == 0 {
		c.check(turns, 200, "POST", "/v1/sessions/s1/turns", `{"input":"what is this project?","turn_id":"t-1"}`)
		select {
		case f := <-watched:
			seen = append(seen, f)
		default:
		}
	}
	// A resubmitted turn id answers how the turn ended.
	c.check(turns, 200, "POST", "/v1/sessions/s1/turns", `{"input":"what is this project?","turn_id":"t-1"}`,
		"Accept", "text/event-stream")
	c.check(sessions, 200, "GET", "/v1/sessions?limit=1", "")
	c.check("GET /v1/sessions/{id}/history", 200, "GET", "/v1/sessions/s1/history", "")
	c.check("GET /v1/sessions/{id}/journal", 200, "GET", "/v1/sessions/s1/journal", "")
	c.check("GET /v1/sessions/{id}/usage", 200, "GET", "/v1/sessions/s1/usage", "")
	c.check("GET /v1/usage", 200, "GET", "/v1/usage", "")
	c.check("GET /v1/usage/history", 200, "GET", "/v1/usage/history?bucket=1d", "")
	c.check("GET /v1/tools", 200, "GET", "/v1/tools", "")
	c.check("GET /v1/mcp/authorizations", 200, "GET", "/v1/mcp/authorizations", "")
	c.check("GET /metrics", 200, "GET", "/metrics", "")

	// A streamed turn waits for approval; the session and its approvals
	// are read meanwhile, then the call is approved.
	streamed := e.send("POST", "/v1/sessions/s1/turns", `{"input":"write a note"}`, "Accept", "text/event-stream")
	defer streamed.Body.Close()
	turnPtr := c.response(turns, streamed)
	sse := newSSEReader(streamed.Body)
	frames := sse.until(t, "approval_pending")
	callID := frames[len(frames)-1].event(t).(messages.ApprovalPending).CallID
	status := c.check("GET /v1/sessions/{id}", 200, "GET", "/v1/sessions/s1", "")
	if !bytes.Contains(status, []byte(`"pending_approvals":1`)) {
		t.Errorf("status while waiting: %s", status)
	}
	list := c.check("GET /v1/sessions/{id}/approvals", 200, "GET", "/v1/sessions/s1/approvals", "")
	if tree := c.check("GET /v1/runtime/tree", 200, "GET", "/v1/runtime/tree", ""); !bytes.Contains(tree, []byte(`"approvals":1`)) {
		t.Errorf("the tree does not show the pending approval: %s", tree)
	}
	if !bytes.Contains(list, []byte(callID)) {
		t.Errorf("approvals %s lack %s", list, callID)
	}
	c.check(answer, 200, "POST", "/v1/sessions/s1/approvals/"+callID, `{"allow":true}`)
	frames = append(frames, sse.rest(t)...)
	if got := types(frames); !slices.Contains(got, "tool_finished") || got[len(got)-1] != "turn_ended" {
		t.Errorf("streamed turn: %v", got)
	}
	for _, f := range frames {
		c.frame(turnPtr, f)
	}
	// The watch stream saw the same turn.
	for f := range watched {
		seen = append(seen, f)
		if f.Event == "turn_ended" && f.event(t).Meta().Turn == frames[0].event(t).Meta().Turn {
			break
		}
	}
	for _, f := range seen {
		c.frame(watchPtr, f)
	}
	if got := types(seen); !slices.Contains(got, "approval_pending") {
		t.Errorf("the watch stream did not see the approval: %v", got)
	}

	checkElicitationRoutes(t, c, e, ask)

	c.check("POST /v1/sessions/{id}/cancel", 200, "POST", "/v1/sessions/s1/cancel", "")
	c.check("POST /v1/sessions/{id}/cancel", 200, "POST", "/v1/sessions/s1/cancel", "{}")
	c.check("DELETE /v1/sessions/{id}", 204, "DELETE", "/v1/sessions/s1", "")

	checkScheduleRoutes(t, c, schedules)

	// Errors, each checked against the response documented for its status.
	c.check(create, 201, "POST", "/v1/sessions", `{"id":"s2"}`)
	errorCases := []struct {
		op, method, path, body string
		status                 int
		header                 []string
	}{
		{"GET /v1/sessions/{id}", "GET", "/v1/sessions/nope", "", 404, nil},
		{"GET /v1/sessions/{id}/history", "GET", "/v1/sessions/nope/history", "", 404, nil},
		{"GET /v1/sessions/{id}/journal", "GET", "/v1/sessions/nope/journal", "", 404, nil},
		{"DELETE /v1/sessions/{id}", "DELETE", "/v1/sessions/nope", "", 404, nil},
		{create, "POST", "/v1/sessions", `{"id":"s2"}`, 409, nil},
		{create, "POST", "/v1/sessions", `{"id":"s3","bogus":1}`, 400, nil},
		{create, "POST", "/v1/sessions", `{"id":`, 400, nil},
		{create, "POST", "/v1/sessions", `{"id":"s3"}`, 415, []string{"Content-Type", "text/plain"}},
		{create, "POST", "/v1/sessions", `{"id":"` + strings.Repeat("x", 5000) + `"}`, 413, nil},
		{turns, "POST", "/v1/sessions/s2/turns", `{"input":"  "}`, 400, nil},
		{turns, "POST", "/v1/sessions/nope/turns", `{"input":"hi"}`, 404, nil},
		{answer, "POST", "/v1/sessions/s2/approvals/nope", `{"allow":true}`, 404, nil},
		{answer, "POST", "/v1/sessions/s2/approvals/nope", `{}`, 400, nil},
		{answer, "POST", "/v1/sessions/s2/approvals/nope", `{"allow":"yes"}`, 400, nil},
		{turns, "POST", "/v1/sessions/s2/turns", `{"input":"hi","stream":true}`, 400, nil},
		{"POST /v1/sessions/{id}/cancel", "POST", "/v1/sessions/s2/cancel", `{"now":true}`, 400, nil},
		{sessions, "GET", "/v1/sessions?limit=0", "", 400, nil},
		{sessions, "GET", "/v1/sessions", "", 401, []string{"Authorization", ""}},
		{sessions, "GET", "/v1/sessions", "", 421, []string{"Host", "evil.example:80"}},
		{"GET /healthz", "GET", "/healthz", "", 403, []string{"Origin", "https://evil.example"}},
	}
	for _, tc := range errorCases {
		c.check(tc.op, tc.status, tc.method, tc.path, tc.body, tc.header...)
	}
	e.close()
	c.check("GET /readyz", 503, "GET", "/readyz", "")
	c.check(sessions, 503, "GET", "/v1/sessions", "")

	// Every documented success response was exercised.
	for op, o := range d.operations(t) {
		responses, _ := o["responses"].(map[string]any)
		for status, r := range responses {
			if !strings.HasPrefix(status, "2") {
				continue
			}
			content, _ := r.(map[string]any)["content"].(map[string]any)
			media := slices.Collect(maps.Keys(content))
			if len(media) == 0 {
				media = []string{""}
			}
			for _, mt := range media {
				if key := op + " " + status + " " + mt; !c.covered[key] {
					t.Errorf("documented response %q was not exercised", key)
				}
			}
		}
	}
}

// TestHTTPAPIGuide checks docs/http-api.md against the document: it has a
// section for every route, with its method and path and a curl example, and
// none for a route the server lacks; its table of error codes has every
// code with its status; it names every event of the streams.
func TestHTTPAPIGuide(t *testing.T) {
	d := loadOpenAPI(t)
	b, err := os.ReadFile("../../docs/http-api.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(b)

	sections := map[string]string{}
	heading := regexp.MustCompile(`(?m)^### ([A-Z]+ /\S*)$`)
	locs := heading.FindAllStringSubmatchIndex(guide, -1)
	for i, loc := range locs {
		end := len(guide)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		sections[guide[loc[2]:loc[3]]] = guide[loc[1]:end]
	}
	documented := slices.Sorted(maps.Keys(d.operations(t)))
	if got := slices.Sorted(maps.Keys(sections)); !slices.Equal(got, documented) {
		t.Errorf("the guide's route sections %v\nthe document's routes %v", got, documented)
	}
	for route, text := range sections {
		method, path, _ := strings.Cut(route, " ")
		if !strings.Contains(text, "curl ") {
			t.Errorf("section %s has no curl example", route)
		}
		// curl sends a POST for -d.
		if method != "GET" && !strings.Contains(text, "-X "+method) && (method != "POST" || !strings.Contains(text, " -d '")) {
			t.Errorf("section %s: its example does not send a %s", route, method)
		}
		if static, _, _ := strings.Cut(path, "{"); !strings.Contains(text, "localhost:8080"+static) {
			t.Errorf("section %s: its example does not call %s", route, static)
		}
	}

	// code -> status, from the document's ErrorCode and from the guide.
	row := regexp.MustCompile("(?m)^\\| `?([a-z_]+)`? \\| ([0-9]{3}) \\|")
	table := func(s string) map[string]string {
		out := map[string]string{}
		for _, m := range row.FindAllStringSubmatch(s, -1) {
			out[m[1]] = m[2]
		}
		return out
	}
	desc, _ := d.lookup("#/components/schemas/ErrorCode/description").(string)
	want, got := table(desc), table(guide)
	if len(want) == 0 || !maps.Equal(got, want) {
		t.Errorf("the guide's error codes %v\nthe document's %v", got, want)
	}

	events, _ := d.lookup(responsePointer("POST /v1/sessions/{id}/turns", 200) + "/content/text~1event-stream/x-events").(map[string]any)
	for name := range events {
		if !strings.Contains(guide, "`"+name+"`") {
			t.Errorf("the guide does not name the event %s", name)
		}
	}
}

// BenchmarkOpenAPI measures building the document, which a server does
// once, on the first request for it.
func BenchmarkOpenAPI(b *testing.B) {
	for b.Loop() {
		if _, err := httpapi.OpenAPI(); err != nil {
			b.Fatal(err)
		}
	}
}
