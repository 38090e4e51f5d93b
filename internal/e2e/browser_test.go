package e2e_test

import (
	"context"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/templates"
)

// TestBrowser runs the waiting room in headless Chromium: the whole way from
// waiting page to checkout over each rung of the transport ladder, a reload,
// and screenshots of the waiting page in each language (test-output/browser).
// Without chromium, node or node_modules it skips, unless
// WAITROOM_REQUIRE_BROWSER=1. Each scenario has its own server, Redis
// prefix and browser; they run one after another, so that one Chromium at a
// time competes with the other packages' tests for the CPU.
func TestBrowser(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	t.Run("VisitOverWebSocket", func(t *testing.T) {
		browserVisitScenario(t, kit, browserBlock{}, "ws")
	})
	t.Run("VisitOverSSEWhenWebSocketIsBlocked", func(t *testing.T) {
		browserVisitScenario(t, kit, browserBlock{ws: true}, "sse")
	})
	t.Run("VisitOverPollingWhenWebSocketAndSSEAreBlocked", func(t *testing.T) {
		browserVisitScenario(t, kit, browserBlock{ws: true, sse: true}, "poll")
	})
	t.Run("ReloadKeepsThePlace", func(t *testing.T) {
		browserReloadScenario(t, kit)
	})
	t.Run("OpenPageSwitchesToAcceptPageWhenDegraded", func(t *testing.T) {
		browserDegradeScenario(t, kit)
	})
	t.Run("WaitingPageScreenshots", func(t *testing.T) {
		browserScreenshotScenario(t, kit)
	})
}

// browserVisit is visit.mjs's RESULT.
type browserVisit struct {
	Ticket        string
	Position      int64
	ConnText      string
	Timing        struct{ ServerNow, ResponseStart, DOMInteractive int64 } // Unix ms
	Positions     []int64
	Modes         []string
	ConnTexts     []string
	Countdowns    []string
	AdmittedAt    int64 // Unix ms, 0 when never seen
	NavAt         int64 // Unix ms of the request carrying wr_code
	WrCode        string
	TokenInURL    bool // some request carried wr_token
	ShopToken     string
	ShopResponses []struct {
		T        int64
		WithCode bool
		Status   int
	}
	HTTPErrors []string // "status METHOD path" of every answer >= 400
	FinalURL   string
	Foreign    []string
	PageErrors []string
}

// browserVisitScenario: a visitor behind others opens the waiting page and
// settles on transport want (what block leaves it); then the room opens, its
// place falls, it is admitted, waits out the jitter and lands on checkout
// with a token that verifies.
func browserVisitScenario(t *testing.T, kit browserKit, block browserBlock, want string) {
	site := startBrowserSite(t, block)
	site.putRoom(browserRoomSettings())
	const ahead = 5
	site.enterOthers(ahead)

	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	sc := kit.startScript(ctx, t, "visit", site, "EXPECT_TRANSPORT="+want)
	var rd struct {
		Ticket   string
		Position int64
	}
	sc.awaitReady(ctx, &rd)
	opened := browserRoomSettings()
	opened.Paused = false
	site.putRoom(opened)
	var v browserVisit
	sc.wait(&v)

	t.Logf("page rendered at %d, first byte %+d ms, script ran by %+d ms", v.Timing.ServerNow,
		v.Timing.ResponseStart-v.Timing.ServerNow, v.Timing.DOMInteractive-v.Timing.ServerNow)
	t.Logf("positions %v, modes %v, countdowns %q, shop answers %+v", v.Positions, v.Modes, v.Countdowns, v.ShopResponses)
	if len(v.Foreign) > 0 || len(v.PageErrors) > 0 {
		t.Errorf("requests off loopback %q, page errors %q", v.Foreign, v.PageErrors)
	}
	if v.Ticket == "" || v.Ticket != rd.Ticket {
		t.Errorf("ticket %q, at READY %q", v.Ticket, rd.Ticket)
	}

	// The place falls from behind the others, one step or more at a time.
	if rd.Position != ahead+1 || len(v.Positions) == 0 || v.Positions[0] != ahead+1 {
		t.Errorf("place at the start %d, first seen %v: want %d", rd.Position, v.Positions, ahead+1)
	}
	if len(v.Positions) < 2 {
		t.Errorf("the place never fell: saw only %v", v.Positions)
	}
	for i := 1; i < len(v.Positions); i++ {
		if v.Positions[i] >= v.Positions[i-1] || v.Positions[i] < 1 {
			t.Errorf("places seen %v: not falling at %d", v.Positions, i)
		}
	}

	// The indicator names the rung in use; no higher rung was ever reached
	// and, once connected, the page never lost its connection.
	allowed := []string{"refresh", "connecting", want}
	if len(v.Modes) == 0 || v.Modes[len(v.Modes)-1] != want {
		t.Errorf("connection modes %v: want to end on %q", v.Modes, want)
	}
	for _, m := range v.Modes {
		if !slices.Contains(allowed, m) {
			t.Errorf("connection modes %v: %q is not one of %v", v.Modes, m, allowed)
		}
	}
	if wantText := templates.T(templates.English, "conn."+want); v.ConnText != wantText {
		t.Errorf("connection indicator says %q on %s, want %q", v.ConnText, want, wantText)
	}
	wsRefused, sseRefused := site.refusedWS.Load(), site.refusedSSE.Load()
	t.Logf("the fake proxy refused %d WebSocket and %d event stream requests", wsRefused, sseRefused)
	if block.ws != (wsRefused > 0) || block.sse != (sseRefused > 0) {
		t.Errorf("refused %d WebSocket and %d SSE requests with blocks %+v: the page did not try each blocked rung", wsRefused, sseRefused, block)
	}

	// Admitted, with a countdown, and not sent on before the jitter is out.
	counting := func(text string) bool {
		for n := range int64(10) {
			if n > 0 && text == templates.Tn(templates.English, "admitted.countdown", n) {
				return true
			}
		}
		return false
	}
	if v.AdmittedAt == 0 || !slices.ContainsFunc(v.Countdowns, counting) {
		t.Errorf("admitted at %d with countdowns %q: want the admitted block with a countdown", v.AdmittedAt, v.Countdowns)
	}
	tks, _, err := site.line.StatusMany(context.Background(), browserRoom, []string{v.Ticket})
	if err != nil || len(tks) != 1 || tks[0].State != vocab.StateAdmitted {
		t.Fatalf("ticket after the visit: %+v %v", tks, err)
	}
	tk := tks[0]
	if j := tk.OrderableAt.Sub(tk.AdmittedAt); j != 2*time.Second {
		t.Errorf("jitter %v, want the pinned 2s", j)
	}
	if orderable := tk.OrderableAt.UnixMilli(); v.NavAt < orderable || v.AdmittedAt > v.NavAt {
		t.Errorf("admitted seen at %d, sent to the shop at %d: orderable only at %d", v.AdmittedAt, v.NavAt, orderable)
	} else {
		t.Logf("sent to the shop %d ms after orderable_at (%s), %d ms after the page saw admission",
			v.NavAt-orderable, tk.OrderableAt.Format(time.StampMilli), v.NavAt-v.AdmittedAt)
	}

	// Checkout, with a token redeemed for the redirect's hand-off code,
	// which verifies; the token itself never travels in a URL.
	if v.FinalURL != site.url+"/shop" {
		t.Errorf("ended at %s, want %s/shop", v.FinalURL, site.url)
	}
	if n := len(v.ShopResponses); n == 0 || v.ShopResponses[n-1].Status != 200 {
		t.Errorf("shop answers %+v: want to end on 200", v.ShopResponses)
	}
	// The page waits for orderable_at and the token's nbf is the same
	// moment, so the shop never says 425 Too Early on the way.
	for _, r := range v.ShopResponses {
		if r.Status == http.StatusTooEarly {
			t.Errorf("the shop said 425 Too Early %d ms after orderable_at", r.T-tk.OrderableAt.UnixMilli())
		}
	}
	for _, e := range v.HTTPErrors {
		switch {
		case strings.HasPrefix(e, "403 ") && block.ws && strings.HasSuffix(e, "/ws"):
		case strings.HasPrefix(e, "403 ") && block.sse && strings.HasSuffix(e, "/events"):
		default:
			t.Errorf("the browser got %s", e)
		}
	}
	if v.WrCode == "" || v.TokenInURL || v.ShopToken == "" || strings.Contains(v.ShopToken, v.WrCode) {
		t.Fatalf("wr_code %q, a token in a URL %v, shop cookie %q: want a code in the URL and a token only in the cookie", v.WrCode, v.TokenInURL, v.ShopToken)
	}
	verdict, err := site.line.Verify(context.Background(), v.ShopToken, browserRoom)
	if err != nil || !verdict.Valid || verdict.Claims.TicketID != v.Ticket {
		t.Errorf("token verdict %+v, %v: want valid for ticket %s", verdict, err, v.Ticket)
	}
}

// browserReloadScenario: a reload shows the same ticket at the same place,
// and the line did not gain a second ticket for the visitor.
func browserReloadScenario(t *testing.T, kit browserKit) {
	site := startBrowserSite(t, browserBlock{})
	site.putRoom(browserRoomSettings()) // paused: the place holds still
	const ahead = 3
	site.enterOthers(ahead)

	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	var v struct {
		Before, After struct {
			Ticket   string
			Position int64
			Entry    int64 // the place at entry kept in sessionStorage for the progress bar
		}
		Modes      []string // the connection indicator over both loads
		Foreign    []string
		PageErrors []string
	}
	kit.startScript(ctx, t, "reload", site).wait(&v)
	t.Logf("before %+v, after %+v", v.Before, v.After)
	if len(v.Foreign) > 0 || len(v.PageErrors) > 0 {
		t.Errorf("requests off loopback %q, page errors %q", v.Foreign, v.PageErrors)
	}
	if v.Before.Ticket == "" || v.After.Ticket != v.Before.Ticket {
		t.Errorf("ticket %q before the reload, %q after", v.Before.Ticket, v.After.Ticket)
	}
	if v.Before.Position != ahead+1 || v.After.Position > v.Before.Position || v.After.Position < 1 {
		t.Errorf("place %d before the reload, %d after: want %d, then no further back", v.Before.Position, v.After.Position, ahead+1)
	}
	if v.After.Entry != v.Before.Entry || v.Before.Entry != ahead+1 {
		t.Errorf("place at entry %d before the reload, %d after: want %d kept", v.Before.Entry, v.After.Entry, ahead+1)
	}
	if live := slices.DeleteFunc(slices.Clone(v.Modes), func(m string) bool { return m != "ws" }); len(live) != 2 || slices.Contains(v.Modes, "reconnecting") {
		t.Errorf("connection modes %v: want live once per load, never reconnecting", v.Modes)
	}
	if st := site.stats(); st["entered_total"] != ahead+1 || st["waiting"] != ahead+1 {
		t.Errorf("stats %v: want %d entered and waiting, one ticket for the visitor", st, ahead+1)
	}
}

// browserScreenshotScenario saves the waiting page in every language to
// test-output/browser and checks what it says, in the page's language, with
// nothing sticking out sideways at 360 px.
func browserScreenshotScenario(t *testing.T, kit browserKit) {
	site := startBrowserSite(t, browserBlock{})
	site.putRoom(browserRoomSettings()) // paused: the page stays on "waiting"
	const ahead = 1233
	for range ahead {
		if err := browserEnterQuietly(site.url); err != nil {
			t.Fatal(err)
		}
	}

	langs := make([]string, len(templates.Langs))
	for i, l := range templates.Langs {
		langs[i] = string(l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	var v struct {
		Shots []struct {
			Lang, View, File, Ticket    string
			HTMLLang, Title, Heading    string
			Position, Ahead, Connection string
			Paused                      string
			ScrollWidth, ClientWidth    int
			Wide                        []string
		}
	}
	kit.startScript(ctx, t, "screenshots", site, "LANGS="+strings.Join(langs, ",")).wait(&v)
	if len(v.Shots) != 3*len(langs) {
		t.Fatalf("%d screenshots, want 3 per language", len(v.Shots))
	}
	tickets := map[string]string{}
	for _, s := range v.Shots {
		l := templates.Lang(s.Lang)
		// One visitor per language, in order, each behind the one before.
		place := int64(ahead + 1 + slices.Index(langs, s.Lang))
		t.Logf("%s: %s %q, %q, %q, %q", s.File, s.View, s.Heading, s.Position, s.Ahead, s.Connection)
		want := map[string][2]string{
			"html lang":  {s.HTMLLang, s.Lang},
			"heading":    {s.Heading, templates.T(l, "waiting.heading")},
			"place":      {s.Position, templates.FormatNumber(l, place)},
			"ahead":      {s.Ahead, templates.Tn(l, "waiting.ahead", place-1)},
			"connection": {s.Connection, templates.T(l, "conn.ws")},
			"paused":     {s.Paused, templates.T(l, "waiting.paused")},
		}
		for what, w := range want {
			if w[0] != w[1] {
				t.Errorf("%s %s: %s %q, want %q", s.Lang, s.View, what, w[0], w[1])
			}
		}
		if s.ScrollWidth > s.ClientWidth || len(s.Wide) > 0 {
			t.Errorf("%s %s: %d px of content in %d px, sticking out: %v", s.Lang, s.View, s.ScrollWidth, s.ClientWidth, s.Wide)
		}
		if prev, ok := tickets[s.Lang]; ok && prev != s.Ticket {
			t.Errorf("%s %s: ticket %s, the other views had %s", s.Lang, s.View, s.Ticket, prev)
		}
		tickets[s.Lang] = s.Ticket
		checkBrowserPNG(t, s.File, map[string]int{"phone": 720, "dark": 720, "desktop": 1280}[s.View])
	}
}

// browserEnterQuietly enters one waiter through the API.
func browserEnterQuietly(base string) error {
	res, err := http.Post(base+"/api/rooms/"+browserRoom+"/enter", "application/json", nil)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("enter: %s", res.Status)
	}
	return nil
}

// checkBrowserPNG checks file is a PNG width pixels wide.
func checkBrowserPNG(t *testing.T, file string, width int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width != width || cfg.Height < 400 {
		t.Errorf("%s: %dx%d %v: want a PNG %d px wide", file, cfg.Width, cfg.Height, err, width)
	}
}

// browserDegradeScenario: redis-server is SIGKILLed while a waiter's page is
// open; the page moves to the accept page by itself, and the order request
// submitted there is written to the outbox and shown with its progress.
func browserDegradeScenario(t *testing.T, kit browserKit) {
	site, rs := startBrowserSiteOwnRedis(t)
	settings := browserRoomSettings() // paused: the page waits, live over WebSocket
	settings.ProductID, settings.ProductName = "sneaker-drop", queue.Text("Limited sneaker drop")
	site.putRoom(settings)
	site.enterOthers(2)

	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	sc := kit.startScript(ctx, t, "degrade", site)
	var rd struct{ Ticket string }
	sc.awaitReady(ctx, &rd)
	rs.Kill()
	var v struct {
		AcceptURL, FinalURL, Product, Status, IntentID string
		PageErrors                                     []string
	}
	sc.wait(&v)
	t.Logf("moved to %s; intent %s is %s", v.AcceptURL, v.IntentID, v.Status)
	if !strings.HasPrefix(v.AcceptURL, site.url+"/rooms/"+browserRoom+"/accept") {
		t.Errorf("the open page went to %q, want the accept page", v.AcceptURL)
	}
	if v.Product != settings.ProductName.String() || len(v.PageErrors) > 0 {
		t.Errorf("product %q, page errors %q", v.Product, v.PageErrors)
	}
	in, err := site.ob.Get(context.Background(), v.IntentID)
	if err != nil || in.Room != browserRoom || !strings.Contains(string(in.Payload), `"quantity":2`) {
		t.Fatalf("intent in the outbox: %+v %v", in, err)
	}
	if v.Status != string(in.Status) && v.Status != "accepted" {
		t.Errorf("page showed %q, outbox has %q", v.Status, in.Status)
	}
}

// prefillNetwork gives 127.0.0.1 n more live places in the browser room, each
// claimed at its network price, as if solved.
func prefillNetwork(ctx context.Context, t *testing.T, line *queue.Line, s queue.Settings, n int) {
	t.Helper()
	for i := range n {
		held, err := line.PlacesHeld(ctx, browserRoom, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		who := fmt.Sprintf("v:prefill-%d", i)
		if err := line.LimitClientPaid(ctx, browserRoom, &s, "127.0.0.1", who, queue.PowPrice(s.BotProtection, held)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := line.EnterWith(ctx, browserRoom, who, queue.EntryProof{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrowserProofOfWork: with proof of work on, a new visitor's waiting page
// shows the checking step in the visitor's language, solves in Web Workers,
// takes a place and goes on to checkout; no place is taken before. With
// WAITROOM_POW_SOLVES=n it also times n more visitors at the default cost
// (docs/benchmarks.md); WAITROOM_POW_HELD=k times them from place k+1 of
// their network (127.0.0.1) on.
func TestBrowserProofOfWork(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	site := startBrowserSite(t, browserBlock{})
	settings := browserRoomSettings()
	settings.BotProtection = queue.BotProtection{ProofOfWork: queue.ProofOfWorkOn, PowCost: queue.DefaultPowCost}
	if c, err := strconv.ParseInt(os.Getenv("WAITROOM_POW_COST"), 10, 64); err == nil {
		settings.BotProtection.PowCost = c // to measure the fixed part (cost 1) apart from the work
	}
	site.putRoom(settings)
	langs := make([]string, len(templates.Langs))
	for i, l := range templates.Langs {
		langs[i] = string(l)
	}
	solves := os.Getenv("WAITROOM_POW_SOLVES")
	timeout := browserScenarioTimeout
	if solves != "" {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sc := kit.startScript(ctx, t, "pow", site, "LANGS="+strings.Join(langs, ","), "SOLVES="+solves,
		fmt.Sprintf("TIMEOUT_MS=%d", (timeout-5*time.Second).Milliseconds()))
	var rd struct{ Tickets []string }
	sc.awaitReady(ctx, &rd)
	if st := site.stats(); st["entered_total"] != float64(len(langs)) {
		t.Errorf("stats %v: want one place per visitor, %d", st, len(langs))
	}
	if held, err := strconv.Atoi(os.Getenv("WAITROOM_POW_HELD")); err == nil {
		// The timed visitors' network (127.0.0.1) already holds held places
		// (with the visits above): the first timed one buys place held+1.
		prefillNetwork(ctx, t, site.line, settings, held-len(langs))
	}
	settings.Paused = false
	site.putRoom(settings)
	var v struct {
		Visits []struct {
			Lang, Ticket, Heading, Status, Role, HTMLLang, TicketAfter string
			Shown                                                      bool
			TookMs                                                     int64
		}
		FinalURL   string
		Times      []int64
		SolveTimes []int64
		Foreign    []string
		PageErrors []string
	}
	sc.wait(&v)
	if len(v.Foreign) > 0 || len(v.PageErrors) > 0 {
		t.Errorf("requests off loopback %q, page errors %q", v.Foreign, v.PageErrors)
	}
	for _, s := range v.Visits {
		l := templates.Lang(s.Lang)
		t.Logf("%s: checking %q / %q, in line after %d ms", s.Lang, s.Heading, s.Status, s.TookMs)
		if !s.Shown || s.Ticket != "" || s.Role != "status" || s.HTMLLang != s.Lang ||
			s.Heading != templates.T(l, "checking.heading") || s.Status != templates.T(l, "checking.body") {
			t.Errorf("%s: checking step %+v", s.Lang, s)
		}
		if s.TicketAfter == "" {
			t.Errorf("%s: no place after the check", s.Lang)
		}
	}
	if !strings.Contains(v.FinalURL, "/shop") {
		t.Errorf("the first visitor ended at %s, not checkout", v.FinalURL)
	}
	pct := func(xs []int64) string {
		xs = slices.Clone(xs)
		slices.Sort(xs)
		return fmt.Sprintf("p50 %d ms, p95 %d ms, max %d ms", xs[len(xs)/2], xs[(len(xs)*95+99)/100-1], xs[len(xs)-1])
	}
	if len(v.Times) > 0 {
		t.Logf("pow_cost %d, held %s, %d visitors: the check (challenge and work) %s; page load to place in line %s",
			settings.BotProtection.PowCost, os.Getenv("WAITROOM_POW_HELD"), len(v.Times), pct(v.SolveTimes), pct(v.Times))
	}
}
