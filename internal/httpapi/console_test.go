package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/internal/testpeers"
	"github.com/agcore/agcore/messages"
	"github.com/agcore/agcore/providers/scripted"
	"github.com/agcore/agcore/toolsys"
)

// screenshotsEnv names a directory where TestConsole_EndToEnd saves
// screenshots of the console's pages (the ones in docs/ were taken so).
const screenshotsEnv = "AGCORE_CONSOLE_SCREENSHOTS"

// browser returns the path of a Chromium-family browser, or ends t with
// testpeers.Missing.
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testpeers.Missing(t, "a Chromium browser (for the console's end-to-end tests)", "apt-get install -y chromium")
	return ""
}

// headless starts a headless browser for the test and returns its context.
func headless(t *testing.T, width, height int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser(t)),
		chromedp.NoSandbox, // the test may run as root, where Chromium's sandbox refuses to start
		chromedp.WindowSize(width, height),
		chromedp.Flag("disable-gpu", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	// The page's exceptions and console messages go to the test's log.
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			t.Logf("page exception: %s", ev.ExceptionDetails.Error())
		case *cdpruntime.EventConsoleAPICalled:
			for _, a := range ev.Args {
				t.Logf("console.%s: %s", ev.Type, a.Value)
			}
		}
	})
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	return ctx
}

func consoleEnv(t *testing.T) *env {
	e := newEnv(t, envOptions{script: exploreScript(), token: "console-token", serve: true,
		config: func(c *httpapi.Config) { c.Console = true }, mcp: []mcpConfig{newAsker(t).config()}})
	waitReady(t, e, "ask")
	return e
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		return
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConsole_EndToEnd drives the console in a headless Chromium: sign in
// with the token, create a session, send a message and watch the streamed
// reply and its tool calls appear, approve a pending write_file (the file
// is then written), answer an MCP server's question in its form, watch a
// long turn's progress report and cancel it, reload and see the history.
func TestConsole_EndToEnd(t *testing.T) {
	e := consoleEnv(t)
	ctx := headless(t, 1280, 900)
	var text string
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			var page string
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = chromedp.Run(dctx, chromedp.Evaluate(`document.querySelector("main").innerText`, &page))
			cancel()
			t.Fatalf("%s: %v\npage:\n%s", what, err, page)
		}
	}
	conversationHas := func(s string) chromedp.Action {
		return chromedp.Poll(`document.getElementById("conversation") && document.getElementById("conversation").textContent.includes(`+jsString(s)+`)`, nil, chromedp.WithPollingTimeout(20*time.Second))
	}

	run("sign in",
		chromedp.Navigate(e.url+"/"),
		chromedp.WaitVisible("#token", chromedp.ByID),
	)
	screenshot(t, ctx, "console-signin.png")
	run("sign in",
		chromedp.SendKeys("#token", "console-token", chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
		chromedp.WaitVisible("#new-session", chromedp.ByID),
	)
	run("create a session",
		chromedp.Click("#new-session", chromedp.ByID),
		chromedp.WaitVisible("#message", chromedp.ByID),
	)
	var hash string
	run("read the session's address", chromedp.Evaluate(`location.hash`, &hash))
	id := strings.TrimPrefix(hash, "#/session/")
	if id == "" || id == hash {
		t.Fatalf("the console went to %q after creating a session", hash)
	}

	run("send a message",
		chromedp.SendKeys("#message", "what is this project?", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID),
		conversationHas("Let me look at the workspace first."),
		chromedp.WaitVisible(`details.tool`, chromedp.ByQuery),
		conversationHas("The project is a greeter that says hello."),
		chromedp.WaitEnabled("#send", chromedp.ByID),
		chromedp.Text("#conversation", &text, chromedp.ByID),
	)
	for _, want := range []string{"list_dir", "read_file", "what is this project?"} {
		if !strings.Contains(text, want) {
			t.Errorf("the conversation lacks %q:\n%s", want, text)
		}
	}

	run("answer an approval",
		chromedp.SendKeys("#message", "write the notes", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID),
		chromedp.WaitVisible(`#approvals button.allow`, chromedp.ByQuery),
	)
	screenshot(t, ctx, "console-session.png")
	if _, err := os.Stat(filepath.Join(e.workspace, "NOTES.md")); err == nil {
		t.Fatal("NOTES.md was written before the approval")
	}
	run("allow write_file",
		chromedp.Click(`#approvals button.allow`, chromedp.ByQuery),
		chromedp.WaitEnabled("#send", chromedp.ByID),
		chromedp.WaitNotPresent(`#approvals button.allow`, chromedp.ByQuery),
	)
	if b, err := os.ReadFile(filepath.Join(e.workspace, "NOTES.md")); err != nil || string(b) != "noted\n" {
		t.Errorf("NOTES.md after the approval: %q, %v", b, err)
	}

	run("answer a question of an MCP server",
		chromedp.SendKeys("#message", "elicit an answer", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID),
		chromedp.WaitVisible(`#elicitations button.accept`, chromedp.ByQuery),
		chromedp.Text(`#elicitations`, &text, chromedp.ByQuery),
	)
	for _, want := range []string{"ask asks: How old are you?", "Age *", "name (What to call you)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the question's form lacks %q:\n%s", want, text)
		}
	}
	screenshot(t, ctx, "console-elicitation.png")
	run("fill the form and accept",
		chromedp.SendKeys(`#elicitations input[name="age"]`, "44", chromedp.ByQuery),
		chromedp.Click(`#elicitations button.accept`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`#elicitations button.accept`, chromedp.ByQuery),
		conversationHas(`accept {"age":44,"name":"Ann"}`),
		chromedp.WaitEnabled("#send", chromedp.ByID),
	)

	run("start a long turn",
		chromedp.SendKeys("#message", "report, then block here", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID),
	)
	select {
	case <-e.block.started:
	case <-ctx.Done():
		t.Fatal("the long turn's tool never started")
	}
	run("cancel it",
		// The long call's box is on the page (nothing moves the button
		// under the pointer any more).
		chromedp.Poll(`document.querySelectorAll("#conversation details.tool").length === 5`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		// Its progress report shows in its box while it runs.
		chromedp.Poll(`[...document.querySelectorAll("#conversation details.tool .progress")].some((e) => e.textContent === "running… 1 of 2 · half way")`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.WaitEnabled("#cancel", chromedp.ByID),
		chromedp.Click("#cancel", chromedp.ByID),
		chromedp.WaitEnabled("#send", chromedp.ByID),
		chromedp.Poll(`document.getElementById("session-status").textContent === "idle"`, nil, chromedp.WithPollingTimeout(20*time.Second)),
	)
	if !journalHas(t, e, id, func(ev messages.JournalEvent) bool { _, ok := ev.(messages.TurnCancelled); return ok }) {
		t.Error("the journal holds no cancelled turn after Cancel")
	}

	run("reload",
		chromedp.Reload(),
		chromedp.WaitVisible("#conversation", chromedp.ByID),
		conversationHas("The project is a greeter that says hello."),
		conversationHas("write_file"),
		conversationHas("block here"),
	)
	run("read the journal",
		chromedp.Click("#journal-link", chromedp.ByID),
		chromedp.WaitVisible("#timeline", chromedp.ByID),
		chromedp.Text("#timeline", &text, chromedp.ByID),
	)
	for _, want := range []string{"user_message", "tool_call_started", "approval_granted", "turn_completed", "turn_cancelled"} {
		if !strings.Contains(text, want) {
			t.Errorf("the timeline lacks %s:\n%s", want, text)
		}
	}
	screenshot(t, ctx, "console-journal.png")
	run("list the sessions",
		chromedp.Navigate(e.url+"/#/sessions"),
		chromedp.WaitVisible(`tr[data-id="`+id+`"]`, chromedp.ByQuery),
		chromedp.Text(`tr[data-id="`+id+`"]`, &text, chromedp.ByQuery),
	)
	if !strings.Contains(text, "active") || !strings.Contains(text, "3") {
		t.Errorf("the session's row reads %q, want it active with 3 turns", text)
	}
	screenshot(t, ctx, "console-sessions.png")
	run("usage", chromedp.Navigate(e.url+"/#/usage"), chromedp.WaitVisible("svg.chart", chromedp.ByQuery),
		chromedp.Text("main", &text, chromedp.ByQuery))
	if !strings.Contains(text, "scripted") {
		t.Errorf("the usage page lacks the model:\n%s", text)
	}
	run("tools", chromedp.Navigate(e.url+"/#/tools"), chromedp.WaitVisible(`tr[data-tool="read_file"]`, chromedp.ByQuery),
		chromedp.Text(`tr[data-tool="read_file"]`, &text, chromedp.ByQuery))
	if !strings.Contains(text, "builtin") || !strings.Contains(text, "1") {
		t.Errorf("the tools page's read_file row reads %q, want builtin with 1 call", text)
	}
	screenshot(t, ctx, "console-tools.png")
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func journalHas(t *testing.T, e *env, session string, match func(messages.JournalEvent) bool) bool {
	t.Helper()
	for entry, err := range e.journal.Read(t.Context(), session, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if match(entry.Event) {
			return true
		}
	}
	return false
}

// TestConsole_Served checks what the server sends for the console
// without a browser: the pages are public and confined by a Content
// Security Policy, the API behind them still wants the token, a foreign
// origin is refused as it is for the API, and without Config.Console
// nothing is served at /.
func TestConsole_Served(t *testing.T) {
	e := consoleEnv(t)
	for _, p := range []string{"/", "/console/app.js", "/console/app.css"} {
		resp, body := e.do("GET", p, "", "Authorization", "")
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") ||
			resp.Header.Get("X-Content-Type-Options") != "nosniff" || len(body) == 0 {
			t.Errorf("GET %s: %d %q", p, resp.StatusCode, resp.Header)
		}
	}
	if resp, _ := e.do("GET", "/v1/sessions", "", "Authorization", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the API without the token: %d", resp.StatusCode)
	}
	if resp, _ := e.do("GET", "/", "", "Origin", "https://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the console from a foreign origin: %d", resp.StatusCode)
	}
	if resp, _ := e.do("GET", "/console/missing.js", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a missing asset: %d", resp.StatusCode)
	}
	plain := newEnv(t, envOptions{script: exploreScript()})
	if resp, _ := plain.do("GET", "/", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET / without Console: %d", resp.StatusCode)
	}
}

// TestConsole_NarrowScreen opens the sessions page 375 px wide, as a
// phone shows it: nothing runs off the side of the page (the table
// scrolls in its own box), and the form controls keep their labels.
func TestConsole_NarrowScreen(t *testing.T) {
	e := consoleEnv(t)
	e.createSession("narrow")
	ctx := headless(t, 375, 800)
	var overflow bool
	var labelled int
	var width int
	err := chromedp.Run(ctx,
		chromedp.EmulateViewport(375, 800, chromedp.EmulateMobile),
		chromedp.Navigate(e.url+"/"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SendKeys("#token", "console-token", chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
		chromedp.WaitVisible(`tr[data-id="narrow"]`, chromedp.ByQuery),
		chromedp.Evaluate(`window.innerWidth`, &width),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflow),
		chromedp.Evaluate(`[...document.querySelectorAll("input, select, textarea")].filter(i => i.labels && i.labels.length > 0).length`, &labelled),
	)
	if err != nil {
		t.Fatal(err)
	}
	if width != 375 {
		t.Fatalf("the page is %d px wide, want 375", width)
	}
	if overflow {
		t.Error("the sessions page is wider than a 375 px screen")
	}
	if labelled != 2 {
		t.Errorf("%d labelled controls on the sessions page, want 2 (search, show)", labelled)
	}
	screenshot(t, ctx, "console-narrow.png")
}

// TestList_Summaries lists sessions with what their journals say, without
// activating them.
func TestList_Summaries(t *testing.T) {
	e := newEnv(t, envOptions{script: exploreScript(), mode: toolsys.ModeBypass})
	e.createSession("s1")
	if resp, body := e.do("POST", "/v1/sessions/s1/turns", `{"input":"hello"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("turn %d: %s", resp.StatusCode, body)
	}
	_, body := e.do("GET", "/v1/sessions", "")
	list := decode[httpapi.SessionList](t, body)
	if len(list.Sessions) != 1 {
		t.Fatalf("sessions: %s", body)
	}
	s := list.Sessions[0]
	if s.ID != "s1" || s.Turns != 1 || s.Usage == nil || s.Usage.TotalTokens == 0 || s.Updated == nil || s.Updated.IsZero() {
		t.Errorf("summary = %+v", s)
	}
}

// TestConsole_ModelOutputIsText has the model answer with markup and
// script; the console shows it as text: no element is created from it and
// no script runs.
func TestConsole_ModelOutputIsText(t *testing.T) {
	const payload = `<img src=x onerror="window.pwned=1"> **bold** <script>window.pwned=2</script>`
	script := scripted.Script{Rules: []scripted.Rule{{Match: scripted.Match{Any: true}, Reply: scripted.Reply{Text: payload}}}}
	e := newEnv(t, envOptions{script: script, token: "console-token", serve: true,
		config: func(c *httpapi.Config) { c.Console = true }})
	e.createSession("xss")
	if resp, body := e.do("POST", "/v1/sessions/xss/turns", `{"input":"`+strings.ReplaceAll(payload, `"`, `\"`)+`"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("turn %d: %s", resp.StatusCode, body)
	}
	ctx := headless(t, 1024, 768)
	var text string
	var injected, pwned bool
	err := chromedp.Run(ctx,
		chromedp.Navigate(e.url+"/#/session/xss"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SendKeys("#token", "console-token", chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
		chromedp.WaitVisible("#conversation .msg.assistant", chromedp.ByQuery),
		chromedp.Text("#conversation", &text, chromedp.ByID),
		chromedp.Evaluate(`document.querySelector("#conversation img, #conversation script") !== null`, &injected),
		chromedp.Evaluate(`window.pwned !== undefined`, &pwned),
	)
	if err != nil {
		t.Fatal(err)
	}
	if injected || pwned {
		t.Errorf("markup from the model became elements (injected %v) or ran (pwned %v)", injected, pwned)
	}
	if !strings.Contains(text, `<img src=x onerror="window.pwned=1">`) {
		t.Errorf("the conversation does not show the markup as text:\n%s", text)
	}
}

// TestConsole_NoMarkupSinks keeps the console's script free of the DOM
// calls that parse strings as markup or code, so that what the server
// sends is only ever inserted as text.
func TestConsole_NoMarkupSinks(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("console", "app.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setTimeout(\"", "srcdoc"} {
		if strings.Contains(string(src), sink) {
			t.Errorf("console/app.js uses %s", sink)
		}
	}
}
