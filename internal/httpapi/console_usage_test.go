package httpapi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agcore/agcore/internal/httpapi"
	"github.com/agcore/agcore/messages"
)

// TestConsole_UsageChart journals turns on three days of the last week and
// opens the Usage page: the chart has a bar per day of the API's history,
// the days with turns carry their sums in the bars' titles and in the
// data table, and the hourly period redraws it with an hour a bar. On a
// 375 px screen the chart fits.
func TestConsole_UsageChart(t *testing.T) {
	e, j, clock := usageJournal(t, envOptions{script: exploreScript(), token: "console-token", serve: true,
		config: func(c *httpapi.Config) { c.Console = true }})
	now := time.Now().UTC()
	today := now.Truncate(24 * time.Hour)
	user := messages.UserMessage{Message: messages.UserText("hi")}
	days := []struct {
		at                 time.Time
		prompt, completion int64
		cost               float64
	}{
		{today.Add(-3*24*time.Hour + 9*time.Hour), 1200, 300, 0.0125},
		{today.Add(-1*24*time.Hour + 15*time.Hour), 4000, 900, 0.05},
		{now.Add(-time.Minute), 600, 150, 0.0075},
	}
	for i, d := range days {
		appendAt(t, j, clock, fmt.Sprintf("s%d", i), d.at, user, call(0, "gpt-4o-mini", d.prompt, d.completion, d.cost),
			messages.TurnCompleted{Outcome: messages.OutcomeCompleted})
	}

	// A turn through the API, so that the runtime's totals by model
	// have a row; it is journaled now, in today's bucket.
	clock.set(now)
	e.createSession("live")
	if r, body := e.do("POST", "/v1/sessions/live/turns", `{"input":"what is this project?"}`); r.StatusCode != 200 {
		t.Fatalf("turn: %d %s", r.StatusCode, body)
	}

	ctx := headless(t, 1280, 900)
	run := pageRunner(t, ctx)
	var bars, withData int
	var desc string
	run("open the usage page", signIn(e, "/#/usage"),
		chromedp.WaitVisible(`svg.chart g.bar`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("svg.chart g.bar").length`, &bars),
		chromedp.Evaluate(`document.querySelectorAll("svg.chart g.bar rect.prompt").length`, &withData),
		chromedp.Evaluate(`document.querySelector("svg.chart desc").textContent`, &desc),
	)
	// The API's history of the same period is what the chart must show.
	since := url.QueryEscape(now.Add(-7 * 24 * time.Hour).Format(time.RFC3339))
	_, body := e.do("GET", "/v1/usage/history?bucket=1d&since="+since, "")
	daily := decode[httpapi.UsageHistory](t, body)
	var turns int
	var prompt, completion int64
	var cost float64
	nonEmpty := 0
	for _, b := range daily.Buckets {
		turns, prompt, completion, cost = turns+b.Turns, prompt+b.Usage.PromptTokens, completion+b.Usage.CompletionTokens, cost+b.Cost
		if b.Usage.PromptTokens > 0 {
			nonEmpty++
		}
	}
	if bars != len(daily.Buckets) || bars != 8 || withData != 3 || nonEmpty != 3 {
		t.Errorf("the daily chart has %d bars, %d with tokens; the API %d buckets, %d with tokens; want 8 and 3",
			bars, withData, len(daily.Buckets), nonEmpty)
	}
	for _, want := range []string{fmt.Sprintf("%d turns", turns), fmt.Sprintf("%d prompt tokens", prompt),
		fmt.Sprintf("%d completion tokens", completion), fmt.Sprintf("cost %.4f", cost)} {
		if !strings.Contains(desc, want) {
			t.Errorf("the chart's description reads %q, want %q", desc, want)
		}
	}
	// The past days hold what was journaled on them; today adds the turn
	// run through the API to the seeded one.
	for i, d := range days {
		start := d.at.Truncate(24 * time.Hour).Format(time.RFC3339)
		if i == len(days)-1 {
			b := daily.Buckets[len(daily.Buckets)-1]
			d.prompt, d.completion, d.cost = b.Usage.PromptTokens, b.Usage.CompletionTokens, b.Cost
		}
		var title, row string
		run("read "+start,
			chromedp.Evaluate(`document.querySelector('svg.chart g.bar[data-start="`+start+`"] title').textContent`, &title),
			chromedp.Evaluate(`document.querySelector('#usage-data tr[data-start="`+start+`"]').textContent`, &row),
		)
		for _, want := range []string{fmt.Sprint(d.prompt), fmt.Sprint(d.completion), fmt.Sprintf("%.4f", d.cost)} {
			if !strings.Contains(title, want) {
				t.Errorf("the bar of %s reads %q, want %s", start, title, want)
			}
		}
		if !strings.Contains(row, fmt.Sprint(d.prompt)) || !strings.Contains(row, fmt.Sprintf("%.4f", d.cost)) {
			t.Errorf("the table row of %s reads %q, want %d prompt tokens and cost %.4f", start, row, d.prompt, d.cost)
		}
	}
	var ticks int
	var models string
	run("read the axes and the models",
		chromedp.Evaluate(`document.querySelectorAll("svg.chart text.tick").length`, &ticks),
		chromedp.Text("main", &models, chromedp.ByQuery))
	if ticks < 8 {
		t.Errorf("the chart has %d axis labels, want the values of both panels and the days", ticks)
	}
	if !strings.Contains(models, "By model") || !strings.Contains(models, "scripted") {
		t.Errorf("the page lacks the totals by model, with the scripted model of the live turn:\n%s", models)
	}
	screenshot(t, ctx, "console-usage.png")

	_, body = e.do("GET", "/v1/usage/history?since="+url.QueryEscape(now.Add(-24*time.Hour).Format(time.RFC3339)), "")
	hourly := decode[httpapi.UsageHistory](t, body)
	nonEmpty = 0
	for _, b := range hourly.Buckets {
		if b.Usage.PromptTokens > 0 {
			nonEmpty++
		}
	}
	run("switch to hours",
		chromedp.SetValue("#usage-range", "24h", chromedp.ByID),
		chromedp.Evaluate(`document.getElementById("usage-range").dispatchEvent(new Event("change"))`, nil),
		poll(`document.querySelectorAll("svg.chart g.bar").length >= 24 && document.querySelectorAll("svg.chart g.bar").length <= 26`),
		chromedp.Evaluate(`document.querySelectorAll("svg.chart g.bar rect.prompt").length`, &withData),
	)
	if withData != nonEmpty || nonEmpty == 0 {
		t.Errorf("the last 24 hours have %d bars with tokens, the API %d hours with tokens", withData, nonEmpty)
	}

	var overflow bool
	run("narrow screen", chromedp.EmulateViewport(375, 800, chromedp.EmulateMobile),
		chromedp.Navigate(e.url+"/#/usage"),
		chromedp.WaitVisible(`svg.chart g.bar`, chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflow))
	if overflow {
		t.Error("the usage page is wider than a 375 px screen")
	}
	screenshot(t, ctx, "console-usage-narrow.png")
}
