// Package mcp connects agcore to Model Context Protocol servers and serves
// agcore's tools over MCP, on the official SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// A remote server's tools become ordinary registry entries named
// mcp__<server>__<tool>:
//
//	conn, err := mcp.NewConn(mcp.ServerConfig{
//		Name:    "fs",
//		Command: "node",
//		Args:    []string{"node_modules/.bin/mcp-server-filesystem", "/srv/data"},
//	}, mcp.ConnOptions{Logger: log})
//	if err != nil {
//		return err
//	}
//	reg := toolsys.NewRegistry(toolsys.Config{Permissions: perms}) // perms: which calls run unasked
//	conn.Bind(reg)     // register mcp__fs__* now and keep them up to date
//	conn.Start(ctx)    // connect, and reconnect with backoff when the server dies
//	defer conn.Close()
//	res, err := reg.Call(ctx, "mcp__fs__read_text_file", json.RawMessage(`{"path":"/srv/data/a.txt"}`), nil)
//
// # Clients
//
// Connect opens one session with a server over stdio (a command, its
// arguments, environment and working directory) or Streamable HTTP (a URL,
// headers, a bearer token), initializes it, and lists the server's tools
// (every page), resources and prompts. Tools returns each remote tool as a
// toolsys.Tool whose schema is the remote input schema, normalised like a
// typed tool's and validated by the same validator before the call is sent:
// invalid arguments are an IsError result naming the field, and the server
// never sees them. Calls run concurrently on the one session; each has a
// timeout (ServerConfig.CallTimeout), and cancelling its context sends the
// server notifications/cancelled. Replies map onto toolsys.Result: text parts
// joined with newlines, images, audio, resources and structured content in
// Metadata, and the server's isError flag in IsError whether or not text
// came with it. ReadResource subscribes to a resource of a server that
// offers subscriptions and keeps what it read until the server says the
// resource was updated, so repeated reads cost no round trip.
//
// # Authorization
//
// An HTTP server is reached with static Headers and a BearerToken, or with
// the MCP authorization flow when ServerConfig.OAuth is set: on a 401 the
// client follows the server's WWW-Authenticate challenge to its
// protected-resource metadata and its authorization server's metadata,
// registers itself (dynamic client registration, unless OAuthConfig.ClientID
// names a client registered in advance), and runs the authorization-code
// flow with PKCE and the server's URL as the resource indicator, on the
// go-sdk's auth package. The interactive step is an Authorizer:
// LoopbackAuthorizer prints the URL and receives the redirect on
// 127.0.0.1; PendingAuthorizer does the same for a server process and
// lists the authorizations waiting for a user (Pending, Changed), for an
// API or a console to show; a program can supply its own. Tokens are kept per server by a
// TokenStore (FileTokenStore: 0600 files) and refreshed as they expire; a
// 403 with insufficient_scope authorizes again with the scopes granted
// before and those asked for. Without an Authorizer, a server that needs a
// new authorization fails with ErrAuthorizationRequired.
// GrantClientCredentials authenticates a service with no user.
//
// # Requests from the server
//
// ServerConfig.Elicit answers a server's questions (elicitation/create),
// checked against the requested schema with its defaults applied
// (ApplyElicitationSchema); Sampling and Sample answer its requests for a
// model completion; Roots answer roots/list. Progress notifications reach
// the callback of CallToolProgress (and, for a remote tool, its call log
// and the call's toolsys.Context.ReportProgress), and
// the server's log messages go to the Logger at the matching level.
//
// # Supervision
//
// A Conn owns the Client of one server and keeps it alive. When the server
// exits or the transport breaks, the calls in flight fail with a
// *ServerError that names the server and wraps ErrServerUnavailable; the
// Conn then reconnects after an exponential backoff (500ms doubling to 30s,
// with jitter; clock and randomness injectable) and gives up, reporting the
// error, after ConnOptions.MaxFailures consecutive failed starts. The tool
// list is refreshed on every reconnect and on notifications/tools/list_changed,
// and bound registries are updated to match.
//
// # Serving
//
// Serve and HTTPHandler expose a registry (or a view of it) as an MCP server:
// tools/list returns the tools with their schemas and tools/call goes through
// Registry.Call, so the permission pipeline, secret substitution, the
// workspace sandbox and the output cap apply exactly as they do for a model.
package mcp
