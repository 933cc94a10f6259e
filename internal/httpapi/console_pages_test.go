package httpapi_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/schedule"
)

// pageRunner runs chromedp actions and fails t with the page's text when
// they fail.
func pageRunner(t *testing.T, ctx context.Context) func(what string, actions ...chromedp.Action) {
	return func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			var page string
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = chromedp.Run(dctx, chromedp.Evaluate(`document.querySelector("main").innerText`, &page))
			cancel()
			t.Fatalf("%s: %v\npage:\n%s", what, err, page)
		}
	}
}

// signIn opens path with the console's token.
func signIn(e *env, path string) chromedp.Action {
	return chromedp.Tasks{
		chromedp.Navigate(e.url + path),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SendKeys("#token", "console-token", chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
	}
}

func poll(expr string) chromedp.Action {
	return chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(20*time.Second))
}

// TestConsole_ActorTree opens the live actor tree while s1's turn waits in
// the block tool: s1 shows as running with the block call in flight, s2 as
// idle, the services with their restart counts; once the turn is
// cancelled through the API, the page's refresh shows s1 idle with
// nothing in flight.
func TestConsole_ActorTree(t *testing.T) {
	e := consoleEnv(t)
	e.createSession("s1")
	e.createSession("s2")
	resp := e.send("POST", "/v1/sessions/s1/turns?stream=true", `{"input":"block please"}`)
	defer resp.Body.Close()
	callID := <-e.block.started

	ctx := headless(t, 1280, 900)
	run := pageRunner(t, ctx)
	var s1, s2, services string
	run("open the tree",
		signIn(e, "/#/tree"),
		chromedp.WaitVisible(`li[data-session="s1"][data-state="running"] li[data-call="`+callID+`"]`, chromedp.ByQuery),
		chromedp.Text(`li[data-session="s1"]`, &s1, chromedp.ByQuery),
		chromedp.Text(`li[data-session="s2"]`, &s2, chromedp.ByQuery),
		chromedp.Text(`#services`, &services, chromedp.ByID),
	)
	// The session's first turn reads "turn 1", as in the journal's
	// timeline and the CLI.
	if !strings.Contains(s1, "running") || !strings.Contains(s1, "turn 1") || !strings.Contains(s1, "block") || !strings.Contains(s1, "restarts 0") {
		t.Errorf("s1 reads %q, want running its turn 1 with the block call and its restarts", s1)
	}
	if !strings.Contains(s2, "idle") {
		t.Errorf("s2 reads %q, want idle", s2)
	}
	for _, want := range []string{"compactor", "retriever", "Restarts"} {
		if !strings.Contains(services, want) {
			t.Errorf("the services table lacks %q:\n%s", want, services)
		}
	}
	screenshot(t, ctx, "console-tree.png")

	if r, body := e.do("POST", "/v1/sessions/s1/cancel", ""); r.StatusCode != 200 {
		t.Fatalf("cancel: %d %s", r.StatusCode, body)
	}
	run("see the refresh",
		chromedp.WaitVisible(`li[data-session="s1"][data-state="idle"]`, chromedp.ByQuery),
		poll(`document.querySelector('li[data-session="s1"] li.call') === null`),
	)
}

// schedulesEnv is a console server that keeps the schedules of store.
func schedulesEnv(t *testing.T, store *schedule.Store) *env {
	return newEnv(t, envOptions{script: exploreScript(), token: "console-token", serve: true,
		config: func(c *httpapi.Config) { c.Console = true; c.Schedules = store }})
}

// TestConsole_Schedules lists a schedule with its next fire and its last
// (failed) fire, adds one through the page's form (the store then holds
// it and the list shows it), and deletes it with its button (the store no
// longer has it).
func TestConsole_Schedules(t *testing.T) {
	store := newSchedules(t)
	sc, err := store.Create(t.Context(), "nightly", schedule.Spec{Expr: "0 3 * * *", Prompt: "write the nightly report", Session: "reports"}, "cli")
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := store.Fire(t.Context(), "nightly", sc.NextFire, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Finish(t.Context(), "nightly", f.N, sc.NextFire.Add(time.Second), "failed", "model down"); err != nil {
		t.Fatal(err)
	}
	e := schedulesEnv(t, store)
	ctx := headless(t, 1280, 900)
	run := pageRunner(t, ctx)
	var nightly, digest, next string
	var navHidden bool
	run("open the schedules",
		signIn(e, "/#/schedules"),
		chromedp.WaitVisible(`tr[data-schedule="nightly"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("nav-schedules").hidden`, &navHidden),
		chromedp.Text(`tr[data-schedule="nightly"]`, &nightly, chromedp.ByQuery),
	)
	if navHidden {
		t.Error("the Schedules link is hidden on a server that keeps schedules")
	}
	for _, want := range []string{"nightly", "0 3 * * *", "active", "failed", "reports"} {
		if !strings.Contains(nightly, want) {
			t.Errorf("the nightly row lacks %q: %q", want, nightly)
		}
	}

	run("add a schedule",
		chromedp.SendKeys("#expr", "@every 1h", chromedp.ByID),
		chromedp.SendKeys("#id", "digest", chromedp.ByID),
		chromedp.SendKeys("#prompt", "summarise the inbox", chromedp.ByID),
		chromedp.Click("#add-schedule", chromedp.ByID),
		chromedp.WaitVisible(`tr[data-schedule="digest"]`, chromedp.ByQuery),
		chromedp.Text(`tr[data-schedule="digest"]`, &digest, chromedp.ByQuery),
		chromedp.Text(`tr[data-schedule="digest"] td.next`, &next, chromedp.ByQuery),
	)
	got, err := store.Get(t.Context(), "digest")
	if err != nil || got.Expr != "@every 1h" || got.Prompt != "summarise the inbox" || got.CreatedBy != "http" {
		t.Fatalf("the store's digest = %+v, %v; want the schedule the form sent", got, err)
	}
	if !strings.Contains(digest, "@every 1h") || !strings.Contains(digest, "active") || next == "—" || next == "" {
		t.Errorf("the digest row reads %q (next fire %q), want it active with its next fire", digest, next)
	}
	screenshot(t, ctx, "console-schedules.png")

	run("refuse a bad expression",
		chromedp.SendKeys("#expr", "every day", chromedp.ByID),
		chromedp.SendKeys("#prompt", "p", chromedp.ByID),
		chromedp.Click("#add-schedule", chromedp.ByID),
		chromedp.WaitVisible(`.schedule-form [role="alert"]`, chromedp.ByQuery),
	)
	run("delete it",
		chromedp.Click(`button[data-delete="digest"]`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`tr[data-schedule="digest"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`tr[data-schedule="nightly"]`, chromedp.ByQuery),
	)
	if _, err := store.Get(t.Context(), "digest"); !errors.Is(err, schedule.ErrNotFound) {
		t.Errorf("the store's digest after Delete: %v, want ErrNotFound", err)
	}
}

// TestConsole_NoSchedules: on a server without schedules the Schedules
// link stays hidden and the page says why.
func TestConsole_NoSchedules(t *testing.T) {
	e := consoleEnv(t)
	ctx := headless(t, 1024, 768)
	run := pageRunner(t, ctx)
	var navHidden bool
	var text string
	run("open the schedules",
		signIn(e, "/#/schedules"),
		poll(`document.querySelector("main h1") && document.querySelector("main h1").textContent === "Schedules"`),
		chromedp.Evaluate(`document.getElementById("nav-schedules").hidden`, &navHidden),
		chromedp.Text("main", &text, chromedp.ByQuery),
	)
	if !navHidden {
		t.Error("the Schedules link shows on a server that keeps no schedules")
	}
	if !strings.Contains(text, "keeps no schedules") || strings.Contains(text, "Add a schedule") {
		t.Errorf("the page reads %q, want it to say the server keeps no schedules, with no form", text)
	}
}

// TestConsole_NarrowNewPages opens the actor tree and the schedules 375
// px wide: nothing runs off the side of the page and every form control
// has a label.
func TestConsole_NarrowNewPages(t *testing.T) {
	store := newSchedules(t)
	if _, err := store.Create(t.Context(), "nightly-report-for-the-whole-team", schedule.Spec{Expr: "30 2 * * 1-5", TimeZone: "Europe/Paris",
		Prompt: "Write the nightly report of everything that happened today"}, "cli"); err != nil {
		t.Fatal(err)
	}
	e := schedulesEnv(t, store)
	e.createSession("a-session-with-a-rather-long-identifier")
	ctx := headless(t, 375, 800)
	run := pageRunner(t, ctx)
	run("sign in", chromedp.EmulateViewport(375, 800, chromedp.EmulateMobile), signIn(e, "/#/tree"),
		chromedp.WaitVisible(`li[data-session="a-session-with-a-rather-long-identifier"]`, chromedp.ByQuery))
	for _, page := range []struct{ hash, ready, shot string }{
		{"#/tree", `#services`, "console-tree-narrow.png"},
		{"#/schedules", `tr[data-schedule]`, ""},
	} {
		var overflow bool
		var unlabelled int
		run(page.hash,
			chromedp.Navigate(e.url+"/"+page.hash),
			chromedp.WaitVisible(page.ready, chromedp.ByQuery),
			chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflow),
			chromedp.Evaluate(`[...document.querySelectorAll("input, select, textarea")].filter(i => !i.labels || i.labels.length === 0).length`, &unlabelled),
		)
		if overflow {
			t.Errorf("%s is wider than a 375 px screen", page.hash)
		}
		if unlabelled != 0 {
			t.Errorf("%s has %d form controls without a label", page.hash, unlabelled)
		}
		if page.shot != "" {
			screenshot(t, ctx, page.shot)
		}
	}
}
