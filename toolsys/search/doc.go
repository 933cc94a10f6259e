// Package search gives agents the web_search tool over a search backend:
// a SearXNG instance (or any service that answers SearXNG's JSON API) or
// the Brave Search API.
//
//	b, err := search.NewBrave(search.BraveConfig{APIKey: os.Getenv("BRAVE_API_KEY")})
//	if err != nil {
//		return err
//	}
//	ws, _ := search.New(search.ToolConfig{Backend: b})
//	reg.MustRegister(ws.Tool())
//
// The tool is registered only when a backend is configured: without one,
// agents have no web_search at all.
//
// # What leaves the process
//
// A search is one GET to the backend's host and nowhere else: a redirect to
// another host is refused, the body is read up to MaxResponseBytes, and
// each search is bounded by a timeout. SearXNG receives the query, the
// format, the page number and the configured language; Brave receives the
// query, the count, the configured country and the API key in its
// X-Subscription-Token header. Nothing else from the session goes out,
// but the query is the model's text: what the model puts in it reaches the
// service.
//
// # What comes back
//
// Results are text from the web, and untrusted: titles and snippets have
// their HTML tags removed and entities decoded, are folded onto one line
// and capped; results whose URL is not http or https are dropped. A
// service that fails, or answers something that is not its JSON, gives the
// model an error result naming the backend and the status; the registry
// masks credentials in it, the API key included.
package search
