package httpapi_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/toolsys/mcp"
)

// liveAuthorizations is an AuthorizationLister whose list the test
// changes.
type liveAuthorizations struct {
	mu   sync.Mutex
	list []mcp.PendingAuthorization
}

func (l *liveAuthorizations) Pending() []mcp.PendingAuthorization {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]mcp.PendingAuthorization(nil), l.list...)
}

func (l *liveAuthorizations) set(list ...mcp.PendingAuthorization) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = list
}

// TestConsole_MCPAuthorizationBanner shows a pending MCP authorization on
// the sessions page: the server's name and its URL as a link that opens a
// new tab with rel="noopener noreferrer", a URL that is not http(s) as
// text only; the banner goes once the authorization is no longer pending.
func TestConsole_MCPAuthorizationBanner(t *testing.T) {
	now := time.Now()
	pending := &liveAuthorizations{}
	pending.set(
		mcp.PendingAuthorization{Server: "github", URL: "https://as.example/authorize?client_id=c&state=s1",
			RedirectURL: "http://127.0.0.1:43123/callback", Started: now, Expires: now.Add(10 * time.Minute)},
		mcp.PendingAuthorization{Server: "rogue", URL: "javascript:alert(1)", RedirectURL: "http://127.0.0.1:43124/callback", Started: now},
	)
	e := newEnv(t, envOptions{script: exploreScript(), token: "console-token", serve: true,
		config: func(c *httpapi.Config) { c.Console = true; c.MCPAuthorizations = pending }})

	ctx := headless(t, 1280, 900)
	run := pageRunner(t, ctx)
	var banner, href, target, rel string
	var ok bool
	var rogueLinks int
	run("see the banner",
		signIn(e, "/#/sessions"),
		chromedp.WaitVisible(`#mcp-authorizations [data-server="github"] a`, chromedp.ByQuery),
		chromedp.Text(`#mcp-authorizations`, &banner, chromedp.ByID),
		chromedp.AttributeValue(`#mcp-authorizations [data-server="github"] a`, "href", &href, &ok, chromedp.ByQuery),
		chromedp.AttributeValue(`#mcp-authorizations [data-server="github"] a`, "target", &target, &ok, chromedp.ByQuery),
		chromedp.AttributeValue(`#mcp-authorizations [data-server="github"] a`, "rel", &rel, &ok, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#mcp-authorizations [data-server="rogue"] a').length`, &rogueLinks),
	)
	if !strings.Contains(banner, "MCP server github needs authorization") || !strings.Contains(banner, "MCP server rogue needs authorization") {
		t.Errorf("the banner reads %q, want both servers named", banner)
	}
	if href != "https://as.example/authorize?client_id=c&state=s1" || target != "_blank" || rel != "noopener noreferrer" {
		t.Errorf("link href=%q target=%q rel=%q, want the URL in a new tab with noopener noreferrer", href, target, rel)
	}
	if rogueLinks != 0 || !strings.Contains(banner, "javascript:alert(1)") {
		t.Errorf("the javascript: URL: %d links, banner %q; want it as text only", rogueLinks, banner)
	}
	screenshot(t, ctx, "console-mcp-authorization.png")

	pending.set()
	run("see the banner go", poll(`document.getElementById("mcp-authorizations").hidden === true`))
}
