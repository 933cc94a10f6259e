package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/agcore/agcore/memory"
)

// OpenAPIVersion is the version of the OpenAPI specification the document
// follows.
const OpenAPIVersion = "3.1.0"

// The tags that group the operations of the document.
const (
	tagSessions   = "sessions"
	tagTurns      = "turns"
	tagApprovals  = "approvals"
	tagUsage      = "usage"
	tagOperations = "operations"
	tagSchedules  = "schedules"
	// tagElicitations groups the MCP servers' questions.
	tagElicitations = "elicitations"
	// tagMCP groups the MCP servers' authorizations.
	tagMCP = "mcp"
)

// The names of the document's components.
const (
	securityScheme  = "bearerAuth"
	paramSessionID  = "SessionID"
	paramCallID     = "CallID"
	paramScheduleID = "ScheduleID"
	// paramElicitationID is the {elicitation_id} of a question.
	paramElicitationID = "ElicitationID"
	schemaErrorBody    = "ErrorBody"
	schemaError        = "Error"
	schemaErrorCode    = "ErrorCode"
	schemaEvent        = "SessionEvent"
	eventsExtension    = "x-events"
	openAPIMediaType   = "application/json"
)

// OpenAPI returns the OpenAPI 3.1 document that describes the API, as
// JSON: every route the server registers, its parameters, request
// body and responses, the schemas of every body (reflected from the Go
// types the handlers encode and decode), the event streams and the events
// they carry, the bearer security scheme and the error codes. The server
// serves it at GET /v1/openapi.json.
func OpenAPI() ([]byte, error) {
	doc, err := buildOpenAPI(docComment(goComments()))
	if err != nil {
		return nil, fmt.Errorf("httpapi: building the OpenAPI document: %w", err)
	}
	// Not escaped for HTML, as the response writer's redactor would
	// rewrite it.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("httpapi: encoding the OpenAPI document: %w", err)
	}
	return b.Bytes(), nil
}

// handleOpenAPI serves the document, built once per server.
func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	b, err := s.openAPI()
	if err != nil {
		writeError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", openAPIMediaType)
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(b)
}

// The objects of an OpenAPI document, as far as this one uses them.
type (
	openAPIDoc struct {
		OpenAPI    string                           `json:"openapi"`
		Info       openAPIInfo                      `json:"info"`
		Tags       []openAPITag                     `json:"tags"`
		Security   []map[string][]string            `json:"security"`
		Paths      map[string]map[string]*openAPIOp `json:"paths"`
		Components openAPIComponents                `json:"components"`
	}
	openAPIInfo struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	}
	openAPITag struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	openAPIOp struct {
		OperationID string                      `json:"operationId"`
		Summary     string                      `json:"summary"`
		Description string                      `json:"description"`
		Tags        []string                    `json:"tags"`
		Security    []map[string][]string       `json:"security,omitempty"`
		Parameters  []any                       `json:"parameters,omitempty"`
		RequestBody *openAPIRequestBody         `json:"requestBody,omitempty"`
		Responses   map[string]*openAPIResponse `json:"responses"`
	}
	openAPIParam struct {
		Name        string `json:"name"`
		In          string `json:"in"`
		Description string `json:"description"`
		Required    bool   `json:"required,omitempty"`
		Schema      any    `json:"schema"`
	}
	openAPIRequestBody struct {
		Description string                  `json:"description"`
		Required    bool                    `json:"required"`
		Content     map[string]openAPIMedia `json:"content"`
	}
	openAPIResponse struct {
		Description string                   `json:"description"`
		Headers     map[string]openAPIHeader `json:"headers,omitempty"`
		Content     map[string]openAPIMedia  `json:"content,omitempty"`
	}
	openAPIHeader struct {
		Description string    `json:"description"`
		Schema      rawSchema `json:"schema"`
	}
	openAPIMedia struct {
		Schema  any            `json:"schema"`
		Example any            `json:"example,omitempty"`
		Events  map[string]any `json:"x-events,omitempty"`
	}
	openAPIComponents struct {
		Schemas         map[string]json.RawMessage `json:"schemas"`
		Parameters      map[string]openAPIParam    `json:"parameters"`
		SecuritySchemes map[string]any             `json:"securitySchemes"`
	}
)

// buildOpenAPI assembles the document from routeTable; comment gives the
// descriptions of the reflected schemas.
func buildOpenAPI(comment func(t reflect.Type, field string) string) (*openAPIDoc, error) {
	ss := newSchemaSet(comment)
	doc := &openAPIDoc{
		OpenAPI: OpenAPIVersion,
		Info: openAPIInfo{
			Title:       "agcore HTTP API",
			Version:     "v1",
			Description: apiDescription,
		},
		Tags: []openAPITag{
			{tagSessions, "Create, list, inspect and delete sessions; read their conversation."},
			{tagTurns, "Run turns, stream their events, cancel them, watch a session."},
			{tagApprovals, "Tool calls that wait for a human decision."},
			{tagUsage, "Token usage and cost."},
			{tagOperations, "Health probes, metrics and this document."},
			{tagSchedules, "Cron schedules that run a prompt in a session at their fire times."},
			{tagElicitations, "Questions MCP servers ask the user during a tool call (elicitation)."},
			{tagMCP, "MCP servers that wait for a user to authorize agcore (OAuth)."},
		},
		Security: []map[string][]string{{securityScheme: {}}},
		Paths:    map[string]map[string]*openAPIOp{},
		Components: openAPIComponents{
			Parameters: map[string]openAPIParam{
				paramSessionID: {Name: "id", In: "path", Required: true,
					Description: fmt.Sprintf("The session's id: 1 to %d bytes, without '/' or NUL.", memory.MaxSessionIDLen),
					Schema:      rawSchema{"type": "string", "minLength": 1, "pattern": "^[^/\\u0000]+$"}},
				paramCallID: {Name: "call_id", In: "path", Required: true,
					Description: "The id of the tool call, as approval_pending and GET .../approvals give it.",
					Schema:      rawSchema{"type": "string", "minLength": 1}},
				paramScheduleID: {Name: "schedule_id", In: "path", Required: true,
					Description: "The schedule's id: letters, digits, '-' and '_', at most 64 bytes.",
					Schema:      rawSchema{"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9_-]+$"}},
				paramElicitationID: {Name: "elicitation_id", In: "path", Required: true,
					Description: "The id of an MCP server's question, as elicitation_pending and GET .../elicitations give it.",
					Schema:      rawSchema{"type": "string", "minLength": 1}},
			},
			SecuritySchemes: map[string]any{securityScheme: map[string]any{
				"type": "http", "scheme": "bearer",
				"description": "Authorization: Bearer <token>, when the server has a token (agcore serve --token, " +
					"or AGCORE_TOKEN). A server without a token serves every request without one; it listens " +
					"on a loopback address unless told otherwise. The health probes never need it.",
			}},
		},
	}
	if err := addCommonSchemas(ss); err != nil {
		return nil, err
	}
	for _, rt := range routeTable() {
		op, err := buildOperation(ss, rt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rt.pattern(), err)
		}
		item := doc.Paths[rt.path]
		if item == nil {
			item = map[string]*openAPIOp{}
			doc.Paths[rt.path] = item
		}
		item[strings.ToLower(rt.method)] = op
	}
	doc.Components.Schemas = ss.schemas
	if err := checkRefs(doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// buildOperation describes one route.
func buildOperation(ss *schemaSet, rt route) (*openAPIOp, error) {
	d := rt.doc
	op := &openAPIOp{
		OperationID: d.id, Summary: d.summary, Description: d.description, Tags: []string{d.tag},
		Responses: map[string]*openAPIResponse{},
	}
	if d.public {
		op.Security = []map[string][]string{}
	}
	for seg := range strings.SplitSeq(rt.path, "/") {
		name, ok := strings.CutPrefix(seg, "{")
		if !ok {
			continue
		}
		switch name = strings.TrimSuffix(name, "}"); name {
		case "id":
			op.Parameters = append(op.Parameters, rawSchema{"$ref": "#/components/parameters/" + paramSessionID})
		case "call_id":
			op.Parameters = append(op.Parameters, rawSchema{"$ref": "#/components/parameters/" + paramCallID})
		case "schedule_id":
			op.Parameters = append(op.Parameters, rawSchema{"$ref": "#/components/parameters/" + paramScheduleID})
		case "elicitation_id":
			op.Parameters = append(op.Parameters, rawSchema{"$ref": "#/components/parameters/" + paramElicitationID})
		default:
			return nil, fmt.Errorf("path parameter {%s} has no component parameter", name)
		}
	}
	for _, q := range d.query {
		op.Parameters = append(op.Parameters, openAPIParam{Name: q.name, In: "query", Description: q.description, Schema: q.schema})
	}
	if d.body != nil {
		schema, err := ss.requestRef(d.body.value)
		if err != nil {
			return nil, err
		}
		op.RequestBody = &openAPIRequestBody{Description: d.body.description, Required: d.body.required,
			Content: map[string]openAPIMedia{"application/json": {Schema: schema}}}
	}
	for _, rp := range d.replies {
		resp, err := buildReply(ss, rp)
		if err != nil {
			return nil, err
		}
		op.Responses[strconv.Itoa(rp.status)] = resp
	}
	for _, f := range failures(d) {
		key := strconv.Itoa(f.status)
		if _, ok := op.Responses[key]; ok {
			return nil, fmt.Errorf("status %s is both a success and a failure", key)
		}
		op.Responses[key] = errorResponse(f)
	}
	return op, nil
}

// buildReply describes a successful response.
func buildReply(ss *schemaSet, rp reply) (*openAPIResponse, error) {
	resp := &openAPIResponse{Description: rp.description}
	for name, desc := range rp.headers {
		if resp.Headers == nil {
			resp.Headers = map[string]openAPIHeader{}
		}
		resp.Headers[name] = openAPIHeader{Description: desc, Schema: rawSchema{"type": "string"}}
	}
	if rp.json != nil || rp.stream != noStream || rp.text != "" {
		resp.Content = map[string]openAPIMedia{}
	}
	if rp.json != nil {
		schema, err := ss.responseRef(rp.json)
		if err != nil {
			return nil, err
		}
		resp.Content["application/json"] = openAPIMedia{Schema: schema}
	}
	if rp.stream != noStream {
		media, err := streamMedia(ss, rp.stream)
		if err != nil {
			return nil, err
		}
		resp.Content["text/event-stream"] = media
	}
	if rp.text != "" {
		resp.Content[rp.text] = openAPIMedia{Schema: rawSchema{"type": "string"}}
	}
	return resp, nil
}

// failures returns the error responses of an operation: its own, and
// those every route shares, merged by status.
func failures(d operation) []failure {
	all := slices.Clone(d.failures)
	all = append(all,
		failure{http.StatusMisdirectedRequest, "The Host header does not name the server (DNS rebinding defence); add the name with --allowed-host.",
			[]string{CodeHostNotAllowed}},
		failure{http.StatusForbidden, "The request comes from a web page whose origin is not allowed; allow it with --cors-origin.",
			[]string{CodeOriginNotAllowed}},
		failure{http.StatusInternalServerError, "An internal error; its cause is logged, not sent.", []string{CodeInternal}},
	)
	if !d.public {
		all = append(all,
			failure{http.StatusUnauthorized, "The server has a token and the request does not carry it, or carries another.",
				[]string{CodeUnauthorized}},
			failure{http.StatusServiceUnavailable, "The server is shutting down.", []string{CodeShuttingDown}},
		)
	}
	if d.body != nil {
		all = append(all,
			failure{http.StatusBadRequest, "Reading the request body failed.", []string{CodeBadRequest}},
			failure{http.StatusRequestTimeout, "The body did not arrive within the body timeout (--body-timeout); the connection is closed.",
				[]string{CodeRequestTimeout}},
			failure{http.StatusRequestEntityTooLarge, "The body is larger than the limit (--max-body).", []string{CodeBodyTooLarge}},
			failure{http.StatusUnsupportedMediaType, "The request has a body that is not declared as Content-Type: application/json.",
				[]string{CodeUnsupportedMedia}},
		)
	}
	index := map[int]int{}
	var out []failure
	for _, f := range all {
		i, ok := index[f.status]
		if !ok {
			i = len(out)
			index[f.status] = i
			out = append(out, failure{status: f.status, description: f.description})
		}
		for _, c := range f.codes {
			if !slices.Contains(out[i].codes, c) {
				out[i].codes = append(out[i].codes, c)
			}
		}
	}
	return out
}

// errorResponse describes an error response: an ErrorBody whose code is
// one of the failure's.
func errorResponse(f failure) *openAPIResponse {
	codes := make([]any, len(f.codes))
	for i, c := range f.codes {
		codes[i] = c
	}
	schema := rawSchema{
		"allOf": []any{ref(schemaErrorBody)},
		"properties": rawSchema{"error": rawSchema{
			"properties": rawSchema{"code": rawSchema{"enum": codes}},
		}},
	}
	resp := &openAPIResponse{
		Description: f.description,
		Content:     map[string]openAPIMedia{"application/json": {Schema: schema}},
	}
	if f.status == http.StatusUnauthorized {
		resp.Headers = map[string]openAPIHeader{"WWW-Authenticate": {
			Description: `Bearer realm="agcore", with error="invalid_token" when a wrong token was sent.`,
			Schema:      rawSchema{"type": "string"}}}
	}
	return resp
}
