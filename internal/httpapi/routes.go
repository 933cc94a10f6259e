package httpapi

import (
	"net/http"

	"github.com/agcore/agcore/actors"
	"github.com/agcore/agcore/providers"
)

// route is one endpoint of the API: the method and path it is registered
// under, its handler, and what the OpenAPI document says of it. The server
// registers its endpoints from routeTable and the document is built from
// the same table, so that neither can list an endpoint the other lacks.
type route struct {
	method string
	// path is the ServeMux path; a {name} segment is a path parameter
	// that the document describes with the component parameter of that
	// name.
	path   string
	handle func(*Server, http.ResponseWriter, *http.Request)
	doc    operation
}

// pattern returns the ServeMux pattern of r, "GET /healthz".
func (r route) pattern() string { return r.method + " " + r.path }

// operation is how the OpenAPI document describes a route. The errors
// every route shares (host, origin, token, shutdown, body limits, internal
// errors) are added by the document's builder; failures lists the others.
type operation struct {
	id, summary, description string
	tag                      string
	// public routes are served without the bearer token, and answer
	// while the server shuts down.
	public bool
	// query lists the query parameters.
	query []queryParam
	// body describes the JSON request body; nil when the route takes none.
	body *requestBody
	// replies are the successful responses.
	replies []reply
	// failures are the route's own error responses.
	failures []failure
}

// queryParam is a query parameter, a string or an integer.
type queryParam struct {
	name, description string
	schema            map[string]any
}

// requestBody is a JSON request body: a value of its Go type.
type requestBody struct {
	value       any
	required    bool
	description string
}

// reply is a successful response. Its body, when it has one, is JSON (a
// value of its Go type), an event stream, or text.
type reply struct {
	status      int
	description string
	// json is a value of the Go type of a JSON body.
	json any
	// stream is the kind of event stream, for text/event-stream.
	stream streamKind
	// text is the media type of a text body.
	text string
	// headers maps the names of response headers to their description.
	headers map[string]string
}

// failure is an error response: its status and the codes its body may
// carry.
type failure struct {
	status      int
	description string
	codes       []string
}

// routeTable returns every endpoint of the API.
func routeTable() []route {
	// The failures of the routes of one session.
	badSessionID := failure{http.StatusBadRequest, "The session id is not valid.", []string{CodeBadRequest}}
	sessionNotFound := failure{http.StatusNotFound, "The session does not exist.", []string{CodeSessionNotFound}}
	sessionGone := failure{http.StatusServiceUnavailable, "The session was stopped by its supervisor, or the runtime is shutting down.",
		[]string{CodeSessionStopped, CodeShuttingDown}}
	return append([]route{
		{http.MethodGet, "/healthz", (*Server).handleHealth, operation{
			id: "getHealth", tag: tagOperations, public: true,
			summary:     "Liveness probe",
			description: "Answers while the process serves requests at all. Needs no token.",
			replies:     []reply{{status: http.StatusOK, description: "The server is alive.", json: Health{}}},
		}},
		{http.MethodGet, "/readyz", (*Server).handleReady, operation{
			id: "getReady", tag: tagOperations, public: true,
			summary:     "Readiness probe",
			description: "Answers 200 until the server starts shutting down, then 503, so that a load balancer stops sending requests. Needs no token.",
			replies:     []reply{{status: http.StatusOK, description: "The server takes requests.", json: Health{}}},
			failures: []failure{{http.StatusServiceUnavailable, "The server is shutting down.",
				[]string{CodeShuttingDown}}},
		}},
		{http.MethodGet, "/metrics", (*Server).handleMetrics, operation{
			id: "getMetrics", tag: tagOperations,
			summary: "Prometheus metrics",
			description: "Requests by route and status, turns by outcome, active sessions, open streams, " +
				"requests in flight, pending approvals, usage and cost by model, and per-tool statistics, " +
				"in the Prometheus text exposition format.",
			replies: []reply{{status: http.StatusOK, description: "The metrics.", text: "text/plain"}},
		}},
		{http.MethodGet, "/v1/openapi.json", (*Server).handleOpenAPI, operation{
			id: "getOpenAPI", tag: tagOperations,
			summary: "This document",
			description: "The OpenAPI 3.1 description of the API. It holds no data, but asks for the token " +
				"like every route but the health probes, so that a server with a token discloses nothing " +
				"to a client without it.",
			replies: []reply{{status: http.StatusOK, description: "The OpenAPI document.", json: rawSchema{
				"type": "object", "required": []any{"openapi", "info", "paths"},
				"description": "An OpenAPI 3.1 document.",
			}}},
		}},
		{http.MethodGet, "/v1/usage", (*Server).handleUsage, operation{
			id: "getUsage", tag: tagUsage,
			summary:     "Usage and cost of the runtime",
			description: "Token usage and cost since the server started, in total and by model.",
			replies:     []reply{{status: http.StatusOK, description: "The usage.", json: providers.UsageSnapshot{}}},
		}},
		{http.MethodGet, "/v1/tools", (*Server).handleTools, operation{
			id: "listTools", tag: tagUsage,
			summary:     "Tools and their statistics",
			description: "Every tool with its source (builtin, mcp, wasm, runtime) and its call statistics since the server started, sorted by name.",
			replies:     []reply{{status: http.StatusOK, description: "The tools.", json: ToolList{}}},
		}},
		{http.MethodGet, "/v1/elicitations", (*Server).handleListAllElicitations, operation{
			id: "listAllElicitations", tag: tagElicitations,
			summary: "Every pending question of MCP servers",
			description: "The questions MCP servers ask that wait for an answer: those of every active session, " +
				"by session, then those the runtime could not attribute to one session (no session, the " +
				"candidate sessions listed), which only this list and the operator see.",
			replies: []reply{{status: http.StatusOK, description: "The pending questions.", json: ElicitationList{}}},
		}},
		{http.MethodPost, "/v1/elicitations/{elicitation_id}", (*Server).handleAnswerAnyElicitation, operation{
			id: "answerUnattributedElicitation", tag: tagElicitations,
			summary: "Answer a question of no single session",
			description: "Answers a pending question the runtime could not attribute to one session " +
				"(GET /v1/elicitations lists it without a session). A session's question is answered " +
				"through POST /v1/sessions/{id}/elicitations/{elicitation_id}.",
			body:    &requestBody{value: ElicitationAnswer{}, required: true, description: "The answer."},
			replies: []reply{{status: http.StatusOK, description: "The question was answered.", json: ElicitationResult{}}},
			failures: []failure{
				{http.StatusBadRequest, "The body is not valid (action missing or unknown), or the content does not fit the " +
					"question's schema (the message names the field).",
					[]string{CodeBadRequest, CodeInvalidJSON, CodeUnknownField}},
				{http.StatusNotFound, "No question of that id and of no single session is pending (unknown, answered or expired).",
					[]string{CodeElicitationNotFound}},
			},
		}},
		{http.MethodGet, "/v1/mcp/authorizations", (*Server).handleListMCPAuthorizations, operation{
			id: "listMCPAuthorizations", tag: tagMCP,
			summary: "MCP servers waiting for authorization",
			description: "The OAuth authorizations of MCP servers that wait for a user: open each URL in a browser " +
				"on the serving machine (the authorization server sends the browser back to a listener on its " +
				"127.0.0.1, or to a port forwarded to it). An entry disappears once the browser came back, " +
				"the authorization failed, or its wait expired; the server's tools are then listed.",
			replies: []reply{{status: http.StatusOK, description: "The pending authorizations.", json: MCPAuthorizationList{}}},
		}},
		{http.MethodPost, "/v1/sessions", (*Server).handleCreate, operation{
			id: "createSession", tag: tagSessions,
			summary: "Create a session",
			description: "Creates a session, with the given id or a random one, on the given agent profile " +
				"or the default one. The body is optional. Sessions are created only here: the other " +
				"routes answer 404 for a session that does not exist.",
			body: &requestBody{value: CreateSessionRequest{}, description: "The id and agent of the session; both optional."},
			replies: []reply{{status: http.StatusCreated, description: "The session was created.", json: SessionStatus{},
				headers: map[string]string{"Location": "The path of the new session, /v1/sessions/{id}."}}},
			failures: []failure{
				{http.StatusBadRequest, "The body is not valid, the id is not a valid session id, or the agent is unknown.",
					[]string{CodeBadRequest, CodeInvalidJSON, CodeUnknownField}},
				{http.StatusConflict, "A session with this id exists.", []string{CodeSessionExists}},
				sessionGone,
			},
		}},
		{http.MethodGet, "/v1/sessions", (*Server).handleList, operation{
			id: "listSessions", tag: tagSessions,
			summary: "List sessions",
			description: "Lists the sessions that have a journal or an active actor, sorted by id, a page " +
				"at a time: pass the next field of a page as the after parameter of the next request.",
			query: []queryParam{
				{"limit", "The largest number of sessions in the page.", map[string]any{
					"type": "integer", "minimum": 1, "maximum": maxListLimit, "default": defaultListLimit}},
				{"after", "List the sessions whose id sorts after this one (the next field of the previous page).",
					map[string]any{"type": "string"}},
			},
			replies: []reply{{status: http.StatusOK, description: "A page of sessions.", json: SessionList{}}},
			failures: []failure{{http.StatusBadRequest, "The limit is not an integer from 1 to 1000.",
				[]string{CodeBadRequest}}},
		}},
		{http.MethodGet, "/v1/sessions/{id}", (*Server).handleGet, operation{
			id: "getSession", tag: tagSessions,
			summary:     "Status of a session",
			description: "The session's agent, whether a turn runs, the turn index, queued inputs, message count, usage, cost and pending approvals.",
			replies:     []reply{{status: http.StatusOK, description: "The session's status.", json: SessionStatus{}}},
			failures:    []failure{badSessionID, sessionNotFound, sessionGone},
		}},
		{http.MethodDelete, "/v1/sessions/{id}", (*Server).handleDelete, operation{
			id: "deleteSession", tag: tagSessions,
			summary: "Delete a session",
			description: "Cancels the running turn (its streams end with turn_ended, outcome cancelled, and " +
				"its pending approvals are denied), stops the session's actor, and removes its journal, " +
				"the journals of its sub-agents and its session memory.",
			replies: []reply{{status: http.StatusNoContent, description: "The session was deleted."}},
			failures: []failure{badSessionID,
				{http.StatusNotFound, "The session does not exist, or is being deleted.", []string{CodeSessionNotFound}},
				sessionGone},
		}},
		{http.MethodPost, "/v1/sessions/{id}/turns", (*Server).handleTurn, operation{
			id: "runTurn", tag: tagTurns,
			summary: "Run a turn",
			description: "Submits the input as a user message and runs a turn. The turn is streamed as " +
				"Server-Sent Events when the request accepts text/event-stream (or has ?stream=true), " +
				"and awaited and answered as one JSON object otherwise. A turn that fails or is " +
				"cancelled is still a 200 whose outcome says so: the status reflects the request, not " +
				"the turn. Resubmitting a turn_id the session has seen does not run the turn again: the " +
				"request follows the turn in progress, or reports how it ended. Leaving the request " +
				"does not stop the turn; POST .../cancel does. With output, the turn must end with a " +
				"JSON object matching output.schema: an answer that does not match is sent back to the " +
				"model with the problem (output.retries times), and the result's output holds the " +
				"checked answer; a turn whose answer still does not match fails, and its " +
				"output_failure holds the raw answer and the problem.",
			query: []queryParam{{"stream", "true or 1 streams the turn as Server-Sent Events, as Accept: text/event-stream does.",
				map[string]any{"type": "string", "enum": []string{"true", "1"}}}},
			body: &requestBody{value: TurnRequest{}, required: true, description: "The user message, and optionally the client's id of the submission and the structured answer the turn must end with."},
			replies: []reply{{status: http.StatusOK,
				description: "The turn's result, or its events as Server-Sent Events.",
				json:        actors.TurnResult{}, stream: turnStream}},
			failures: []failure{
				{http.StatusBadRequest, "The body is not valid (input missing or blank, turn_id longer than 128 bytes, an output schema that is not an object schema, an unknown output mode, output.retries out of range), or the session id is not valid.",
					[]string{CodeBadRequest, CodeInvalidJSON, CodeUnknownField}},
				{http.StatusNotFound, "The session does not exist, or a resubmitted turn_id names a turn that cannot be found any more.",
					[]string{CodeSessionNotFound, CodeTurnNotFound}},
				{http.StatusConflict, "A turn is running and the session rejects inputs mid-turn.", []string{CodeSessionBusy}},
				{http.StatusServiceUnavailable, "The session was stopped by its supervisor, the server is shutting down, " +
					"or the client did not read the turn's events fast enough.",
					[]string{CodeSessionStopped, CodeShuttingDown, CodeSlowSubscriber}},
			},
		}},
		{http.MethodPost, "/v1/sessions/{id}/cancel", (*Server).handleCancel, operation{
			id: "cancelTurn", tag: tagTurns,
			summary: "Cancel the running turn",
			description: "Cancels the session's running turn, if any: its streams end with turn_ended, " +
				"outcome cancelled. The body is optional and, when sent, must be an empty object.",
			body:    &requestBody{value: struct{}{}, description: "An empty object, or no body."},
			replies: []reply{{status: http.StatusOK, description: "Whether a turn was running.", json: CancelResponse{}}},
			failures: []failure{
				{http.StatusBadRequest, "The body is not empty or {}, or the session id is not valid.",
					[]string{CodeBadRequest, CodeInvalidJSON, CodeUnknownField}},
				sessionNotFound, sessionGone,
			},
		}},
		{http.MethodGet, "/v1/sessions/{id}/events", (*Server).handleEvents, operation{
			id: "watchSession", tag: tagTurns,
			summary: "Watch a session's events",
			description: "Streams every event the session publishes from now on, of every turn, as " +
				"Server-Sent Events, until the client leaves, the session stops or the server shuts " +
				"down (a last stream_error frame says why). Events published before the request are " +
				"not sent: read the history for them.",
			replies:  []reply{{status: http.StatusOK, description: "The session's events.", stream: watchStream}},
			failures: []failure{badSessionID, sessionNotFound, sessionGone},
		}},
		{http.MethodGet, "/v1/sessions/{id}/approvals", (*Server).handleListApprovals, operation{
			id: "listApprovals", tag: tagApprovals,
			summary:     "Pending approvals",
			description: "The session's tool calls that wait for a decision.",
			replies:     []reply{{status: http.StatusOK, description: "The pending approvals.", json: ApprovalList{}}},
			failures:    []failure{badSessionID, sessionNotFound, sessionGone},
		}},
		{http.MethodPost, "/v1/sessions/{id}/approvals/{call_id}", (*Server).handleAnswerApproval, operation{
			id: "answerApproval", tag: tagApprovals,
			summary: "Answer an approval",
			description: "Lets a waiting tool call run (allow true) or refuses it (allow false, with a " +
				"reason the model reads). The answer is journaled.",
			body:    &requestBody{value: ApprovalAnswer{}, required: true, description: "The decision."},
			replies: []reply{{status: http.StatusOK, description: "The call was answered.", json: ApprovalResult{}}},
			failures: []failure{
				{http.StatusBadRequest, "The body is not valid (allow missing), or the session id is not valid.",
					[]string{CodeBadRequest, CodeInvalidJSON, CodeUnknownField}},
				{http.StatusNotFound, "The session does not exist, or no call of that id waits for approval (unknown, answered or expired).",
					[]string{CodeSessionNotFound, CodeApprovalNotFound}},
				sessionGone,
			},
		}},
		{http.MethodGet, "/v1/sessions/{id}/elicitations", (*Server).handleListElicitations, operation{
			id: "listElicitations", tag: tagElicitations,
			summary: "Pending questions of MCP servers",
			description: "The questions MCP servers ask during the session's tool calls (elicitation/create) " +
				"that wait for an answer: those the runtime could attribute to this session.",
			replies:  []reply{{status: http.StatusOK, description: "The pending questions.", json: ElicitationList{}}},
			failures: []failure{badSessionID, sessionNotFound, sessionGone},
		}},
		{http.MethodPost, "/v1/sessions/{id}/elicitations/{elicitation_id}", (*Server).handleAnswerElicitation, operation{
			id: "answerElicitation", tag: tagElicitations,
			summary: "Answer a question of an MCP server",
			description: "Accepts (with the form's content, checked against the server's schema, defaults " +
				"applied), declines or cancels a pending question of the session. The action and the names " +
				"of the fields given are journaled, never their values.",
			body:    &requestBody{value: ElicitationAnswer{}, required: true, description: "The answer."},
			replies: []reply{{status: http.StatusOK, description: "The question was answered.", json: ElicitationResult{}}},
			failures: []failure{
				{http.StatusBadRequest, "The body is not valid (action missing or unknown), the content does not fit the " +
					"question's schema (the message names the field), or the session id is not valid.",
					[]string{CodeBadRequest, CodeInvalidJSON, CodeUnknownField}},
				{http.StatusNotFound, "The session does not exist, or no question of that id is pending (unknown, answered or expired).",
					[]string{CodeSessionNotFound, CodeElicitationNotFound}},
				sessionGone,
			},
		}},
		{http.MethodGet, "/v1/sessions/{id}/history", (*Server).handleHistory, operation{
			id: "getHistory", tag: tagSessions,
			summary: "Conversation of a session",
			description: "The stored conversation, read from the journal: user, assistant and tool " +
				"messages, summaries of compacted parts included. It does not activate the session.",
			replies:  []reply{{status: http.StatusOK, description: "The conversation.", json: History{}}},
			failures: []failure{badSessionID, sessionNotFound},
		}},
		{http.MethodGet, "/v1/sessions/{id}/journal", (*Server).handleJournal, operation{
			id: "getJournal", tag: tagSessions,
			summary: "Journal of a session",
			description: "Every entry of the session's journal, oldest first, as the timeline of `agcore sessions replay`: " +
				"sequence number, type, time and the event. A turn's user_message carries the trace and span ids " +
				"of its OpenTelemetry span when the runtime traces. It does not activate the session.",
			replies:  []reply{{status: http.StatusOK, description: "The journal.", json: JournalEntries{}}},
			failures: []failure{badSessionID, sessionNotFound},
		}},
		{http.MethodGet, "/v1/sessions/{id}/usage", (*Server).handleSessionUsage, operation{
			id: "getSessionUsage", tag: tagUsage,
			summary:     "Usage and cost of a session",
			description: "The session's token usage and cost: its own model calls and those of its finished sub-agents.",
			replies:     []reply{{status: http.StatusOK, description: "The session's usage.", json: SessionUsage{}}},
			failures:    []failure{badSessionID, sessionNotFound, sessionGone},
		}},
	}, append(append(scheduleRoutes(), treeRoutes()...), usageHistoryRoutes()...)...)
}
