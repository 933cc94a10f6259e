package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/agcore/agcore/messages"
)

// apiDescription is the document's introduction, in CommonMark.
const apiDescription = `The HTTP API of an agcore runtime (` + "`agcore serve`" + `): sessions, turns streamed as
Server-Sent Events, cancellation, tool-call approvals, history, usage, health and Prometheus metrics.
docs/http-api.md is the guide, with an example for every route.

**Authentication.** When the server has a token (` + "`--token`" + ` or AGCORE_TOKEN), every request but
the health probes carries ` + "`Authorization: Bearer <token>`" + `; without it the answer is 401 with a
WWW-Authenticate header.

**Checks before any route.** Every request passes, in this order: the Host header must name the server
(421 host_not_allowed otherwise, which defeats DNS rebinding); a request from a web page of another
origin is refused (403 origin_not_allowed) unless its origin is allowed (` + "`--cors-origin`" + `), which
is then granted CORS access, preflights (OPTIONS) included, answered with 204 without a token; the
token (401); a request with a body must send ` + "`Content-Type: application/json`" + ` (415), arrive
within the body timeout (408) and fit in the body limit (413). Requests without Origin (curl, programs)
are not affected by the origin check.

**Errors.** Every error has a 4xx or 5xx status and the body ` + "`{\"error\": {\"code\": ..., \"message\": ...}}`" + `
(schema ErrorBody); the code is stable (schema ErrorCode lists them all), the message is for people and
never repeats a request header. A path that no route serves is 404 not_found; a method that a path does
not serve is 405 method_not_allowed with an Allow header.

**Streams.** POST /v1/sessions/{id}/turns streams the turn when the request accepts text/event-stream
(or has ?stream=true); GET /v1/sessions/{id}/events streams every event of the session. Their frames
are described on those routes.`

// errorCode is an error code of the API: its status and its meaning.
type errorCode struct {
	code    string
	status  int
	meaning string
}

// errorCodes returns every error code of the API.
func errorCodes() []errorCode {
	return []errorCode{
		{CodeBadRequest, http.StatusBadRequest, "A parameter, a field's value or the session id is not valid, or the agent is unknown; the message names it."},
		{CodeInvalidJSON, http.StatusBadRequest, "The body is not one JSON object, or a field has the wrong type."},
		{CodeUnknownField, http.StatusBadRequest, "The body has a field the route does not know; the message lists the known ones."},
		{CodeUnauthorized, http.StatusUnauthorized, "The token is missing or wrong."},
		{CodeOriginNotAllowed, http.StatusForbidden, "The request comes from a web page whose origin is not allowed."},
		{CodeNotFound, http.StatusNotFound, "No route serves this path, or the path is not in canonical form."},
		{CodeSessionNotFound, http.StatusNotFound, "The session does not exist (or is being deleted)."},
		{CodeApprovalNotFound, http.StatusNotFound, "No tool call of that id waits for approval: unknown, answered or expired."},
		{CodeElicitationNotFound, http.StatusNotFound, "No MCP server's question of that id is pending: unknown, answered or expired."},
		{CodeTurnNotFound, http.StatusNotFound, "A resubmitted turn_id names a turn the journal no longer has."},
		{CodeScheduleNotFound, http.StatusNotFound, "The schedule does not exist."},
		{CodeMethodNotAllowed, http.StatusMethodNotAllowed, "The path exists for other methods, listed in the Allow header."},
		{CodeRequestTimeout, http.StatusRequestTimeout, "The body did not arrive within the body timeout."},
		{CodeSessionExists, http.StatusConflict, "A session with this id exists."},
		{CodeSessionBusy, http.StatusConflict, "A turn is running and the session rejects inputs mid-turn."},
		{CodeScheduleExists, http.StatusConflict, "A schedule with this id exists."},
		{CodeBodyTooLarge, http.StatusRequestEntityTooLarge, "The body is larger than the limit."},
		{CodeUnsupportedMedia, http.StatusUnsupportedMediaType, "The request has a body not declared as application/json."},
		{CodeHostNotAllowed, http.StatusMisdirectedRequest, "The Host header does not name the server."},
		{CodeInternal, http.StatusInternalServerError, "An internal error; its cause is logged, not sent."},
		{CodeShuttingDown, http.StatusServiceUnavailable, "The server is shutting down."},
		{CodeSessionStopped, http.StatusServiceUnavailable, "The session was stopped by its supervisor (restart budget spent, or superseded)."},
		{CodeSlowSubscriber, http.StatusServiceUnavailable, "The client read an event stream too slowly; the turn goes on."},
	}
}

// addCommonSchemas adds the schemas that no route names by Go type: the
// error body, the events, and the parts of message content.
func addCommonSchemas(ss *schemaSet) error {
	var codes []any
	var table strings.Builder
	table.WriteString("The error codes, with their status:\n\n| code | status | meaning |\n|---|---|---|\n")
	for _, c := range errorCodes() {
		codes = append(codes, c.code)
		fmt.Fprintf(&table, "| %s | %d | %s |\n", c.code, c.status, c.meaning)
	}
	schemas := []struct {
		name   string
		schema rawSchema
	}{
		{schemaErrorCode, rawSchema{"type": "string", "enum": codes, "description": table.String()}},
		{schemaError, rawSchema{
			"type": "object", "required": []any{"code", "message"}, "additionalProperties": false,
			"properties": rawSchema{
				"code":    ref(schemaErrorCode),
				"message": rawSchema{"type": "string", "description": "What went wrong, for people."},
			},
		}},
		{schemaErrorBody, rawSchema{
			"type":        "object",
			"description": "The body of every error response, and the data of a stream_error frame.",
			"required":    []any{"error"}, "additionalProperties": false,
			"properties": rawSchema{"error": ref(schemaError)},
		}},
	}
	for _, s := range schemas {
		if err := ss.putRaw(s.name, s.schema); err != nil {
			return err
		}
	}
	// messages.Content refers to Part without reflecting it.
	if _, err := ss.responseRef(messages.Part{}); err != nil {
		return err
	}
	return addEventSchemas(ss)
}

// checkRefs reports a $ref of doc that does not resolve within doc.
func checkRefs(doc *openAPIDoc) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	var root any
	if err := json.Unmarshal(b, &root); err != nil {
		return err
	}
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "$ref" {
					if _, err := resolvePointer(root, s); err != nil {
						return err
					}
					continue
				}
				if err := walk(x); err != nil {
					return err
				}
			}
		case []any:
			for _, x := range v {
				if err := walk(x); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(root)
}

// resolvePointer returns what ref, a "#/..." JSON pointer, names in root.
func resolvePointer(root any, ref string) (any, error) {
	p, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("$ref %q is not within the document", ref)
	}
	cur := root
	for tok := range strings.SplitSeq(strings.TrimPrefix(p, "/"), "/") {
		if p == "" {
			break
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %q: no %q", ref, tok)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("$ref %q: no index %q", ref, tok)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("$ref %q: %q is not a container", ref, tok)
		}
	}
	return cur, nil
}
