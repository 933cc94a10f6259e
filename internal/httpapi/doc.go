// Package httpapi serves an agcore runtime over HTTP: sessions, turns
// streamed as Server-Sent Events, cancellation, tool-call approvals,
// history, usage, health and Prometheus metrics.
//
// Let the runtime wait for approvals answered through the API, give it a
// meter that /metrics reads, then serve:
//
//	perms, _ := toolsys.NewPermissions(toolsys.PermissionConfig{})
//	tools := toolsys.NewRegistry(toolsys.Config{Permissions: perms})
//	reader := sdkmetric.NewManualReader() // /metrics reads the runtime's meter
//	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
//	store, _ := memory.Open(memory.Options{Dir: dir})
//	journal, _ := memory.NewJournal(store, memory.JournalOptions{})
//	rt, _ := actors.New(actors.Config{Journal: journal, Provider: p, Tools: tools, MeterProvider: mp,
//		Approver: actors.ManualApprover()})
//	srv, _ := httpapi.New(httpapi.Config{Runtime: rt, Tools: tools, MetricsReader: reader, Token: token})
//	go srv.Serve(ln)
//	<-ctx.Done()
//	srv.Shutdown(shutdownCtx) // then close journal and store
//
// # Endpoints
//
//	POST   /v1/sessions                         create {"id"?, "agent"?} -> 201 SessionStatus
//	GET    /v1/sessions                         list (?limit=, ?after=) -> SessionList
//	GET    /v1/sessions/{id}                    status, agent, turn, usage -> SessionStatus
//	DELETE /v1/sessions/{id}                    delete a session, cancelling its turn -> 204
//	POST   /v1/sessions/{id}/turns              {"input", "turn_id"?} -> SSE stream or actors.TurnResult
//	POST   /v1/sessions/{id}/cancel             cancel the running turn -> {"cancelled": bool}
//	GET    /v1/sessions/{id}/events             every future event of the session, as SSE
//	GET    /v1/sessions/{id}/approvals          pending approvals -> ApprovalList
//	POST   /v1/sessions/{id}/approvals/{call}   {"allow", "reason"?} -> ApprovalResult
//	GET    /v1/sessions/{id}/elicitations       pending MCP questions -> ElicitationList
//	POST   /v1/sessions/{id}/elicitations/{e}   {"action", "content"?} -> ElicitationResult
//	GET    /v1/elicitations                     every pending MCP question -> ElicitationList
//	POST   /v1/elicitations/{e}                 answer a question of no single session
//	GET    /v1/sessions/{id}/history            the stored conversation -> History
//	GET    /v1/sessions/{id}/usage              the session's usage and cost -> SessionUsage
//	GET    /v1/usage                            the runtime's usage by model -> providers.UsageSnapshot
//	GET    /v1/usage/history                    usage, cost and turns per hour or day -> UsageHistory
//	GET    /healthz, /readyz                    liveness, readiness (503 while shutting down); no auth
//	GET    /metrics                             Prometheus text format
//	GET    /v1/openapi.json                     the OpenAPI 3.1 document of these routes
//
// The routes are registered from one table (routes.go), from which OpenAPI
// also builds the document: its schemas are reflected from the Go types the
// handlers encode and decode, and its tests call every route and validate
// the answers against it. docs/http-api.md is the guide for people.
//
// Every error is {"error": {"code": "...", "message": "..."}} with a 4xx or
// 5xx status: malformed JSON, an unknown field or a missing one is a 400
// naming it, a body over Config.MaxBodyBytes a 413, an unknown session a
// 404, a wrong method a 405 with an Allow header, a missing or wrong bearer
// token a 401 with WWW-Authenticate. Messages never repeat a request
// header.
//
// # Security
//
// A web page in the user's browser must not be able to drive the API, even
// on a loopback address without a token. Before any handler runs, every
// request passes these checks, in this order:
//
//   - Host. The Host header must name the server: the address the client
//     connected to (host:port), "localhost" or a loopback address on that
//     port for a loopback connection, or a name of Config.AllowedHosts.
//     Anything else is 421 host_not_allowed: a DNS-rebinding page, whose
//     own name resolves to the server, sends its own name and is refused.
//   - Origin. A request is cross-origin when its Origin is not the
//     server's own (the scheme and Host the request was sent to), when it
//     is "null", or when Sec-Fetch-Site is neither same-origin nor none. A
//     cross-origin request is 403 origin_not_allowed, whatever its method
//     (GET event streams included), unless its Origin is one of
//     Config.CORSOrigins; that origin is then granted with
//     Access-Control-Allow-Origin set to itself (never "*", never
//     credentials), and CORS preflights (OPTIONS with
//     Access-Control-Request-Method) are answered with 204, the methods
//     GET, POST and DELETE and the headers Authorization, Content-Type,
//     Last-Event-ID and Accept, without a token. Requests without Origin
//     (curl, programs) pass. Every response has Vary: Origin.
//   - Token, when Config.Token is set: 401 without it.
//   - Body. A request with a body must say Content-Type: application/json
//     (415 otherwise, also when the header is missing), which a page can
//     send to another origin only after a preflight; it must arrive within
//     Config.BodyTimeout (408, and the connection is closed) and fit in
//     Config.MaxBodyBytes (413).
//
// Serve also bounds what a client can hold: Config.ReadHeaderTimeout,
// Config.IdleTimeout and Config.MaxConnections open connections. No
// timeout bounds a response: SSE streams last as long as their turn or
// their client, each write bounded by Config.StreamWriteTimeout.
//
// # Streams
//
// A turn is streamed when the request accepts text/event-stream (or has
// ?stream=true). Each runtime event is one frame:
//
//	id: 3
//	event: tool_started
//	data: {"type":"tool_started","data":{"session":"s1","turn":0,"call_id":"c1","name":"read_file",...}}
//
// whose data messages.UnmarshalEvent decodes. The frames of a turn are
// turn_started, then text_delta, tool_started/tool_progress/tool_finished,
// usage, approval_pending, ... as they happen, and turn_ended last, after
// which the response ends. Comment lines (": keep-alive") are sent every
// Config.Heartbeat. A stream that ends early for another reason sends a
// last stream_error frame carrying an error body.
//
// A slow client never slows the session: the runtime buffers each stream
// (actors.Config.EventBuffer). Text deltas and tool progress reports that
// do not fit are dropped, turn_ended always arrives and carries the full
// text, and a client too
// slow for other events gets stream_error slow_subscriber while the turn
// goes on; a client that stops reading is cut off after
// Config.StreamWriteTimeout. Leaving the stream does not stop
// the turn; POST .../cancel does. To follow a turn again, resubmit it with
// the same turn_id.
//
// # Approvals
//
// Approvals are the runtime's (see actors.Config.Approver). A tool call
// that the permission pipeline sends for approval is journaled as
// requested, shows up as an approval_pending frame on the session's
// streams (the session publishes it) and in GET .../approvals, and runs or
// is refused when POST .../approvals/{call} answers it through
// actors.Runtime.Approve; the answer is journaled. The pipeline's approval
// timeout (and the tool's deadline) bound the wait; an unanswered call is
// refused, and the refusal journaled.
package httpapi
