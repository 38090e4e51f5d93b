package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/queue"
)

// TestEmbedBrowser runs the embed in headless Chromium across three loopback
// origins: the waitroom at http://localhost:B, a shop in the room's
// allowed_embedders at http://127.0.0.1:A (a different site, so the frame's
// cookies are third-party ones) and a foreign page at http://127.0.0.1:C.
// Scripts are web/e2e/embed-*.mjs; skips like TestBrowser.
func TestEmbedBrowser(t *testing.T) {
	t.Parallel() // its own site and Chromium contexts; it waits on the page most of the time
	kit := needBrowser(t)
	t.Run("ShopEmbedsTheLineToAdmission", func(t *testing.T) {
		embedShopScenario(t, kit, false)
	})
	t.Run("ShopEmbedsTheLineWithProofOfWork", func(t *testing.T) {
		embedShopScenario(t, kit, true)
	})
	t.Run("PreQueueCountsDownThenShowsTheDrawnPlace", func(t *testing.T) {
		embedPreQueueScenario(t, kit)
	})
	t.Run("LeaveTheLineFromTheFrame", func(t *testing.T) {
		embedLeaveScenario(t, kit)
	})
	t.Run("SoldOutNewcomerJoinsOnUndo", func(t *testing.T) {
		embedSoldOutScenario(t, kit)
	})
	t.Run("ForeignPageCannotFrameIt", func(t *testing.T) {
		embedForeignScenario(t, kit)
	})
	t.Run("OnlyTheEmbedderSaysWhoTheVisitorIs", func(t *testing.T) {
		embedParentScenario(t, kit)
	})
	t.Run("ReloadKeepsThePlaceWithThirdPartyCookiesBlocked", func(t *testing.T) {
		embedReloadScenario(t, kit, "thirdparty")
	})
	t.Run("ReloadKeepsThePlaceWithEveryCookieRefused", func(t *testing.T) {
		embedReloadScenario(t, kit, "blocked")
	})
}

const embedUserSecret = "embed-user-secret-0123456789"

// embedSite is a browserSite seen as localhost, with a shop and a foreign
// page each serving the example shop page at / and an empty page at /blank.
type embedSite struct {
	*browserSite
	waitroom, shop, foreign string
}

func startEmbedSite(t *testing.T) *embedSite {
	t.Helper()
	site := startBrowserSite(t, browserBlock{})
	waitroom := strings.Replace(site.url, "http://127.0.0.1:", "http://localhost:", 1)
	mux := http.NewServeMux()
	mux.Handle("/", shop.EmbedDemoHandler(waitroom, browserRoom))
	mux.HandleFunc("/blank", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>blank</title><link rel="icon" href="data:,"></head><body></body></html>`)
	})
	shop, foreign := httptest.NewServer(mux), httptest.NewServer(mux)
	t.Cleanup(shop.Close)
	t.Cleanup(foreign.Close)
	return &embedSite{browserSite: site, waitroom: waitroom, shop: shop.URL, foreign: foreign.URL}
}

// settings: the browser tests' room, framed by the shop only, with user tokens.
func (s *embedSite) settings(paused bool) queue.Settings {
	st := browserRoomSettings()
	st.Paused = paused
	st.AllowedEmbedders = []string{s.shop}
	st.UserSecret = embedUserSecret
	return st
}

func (s *embedSite) env(extra ...string) []string {
	return append([]string{"WAITROOM_URL=" + s.waitroom, "SHOP_URL=" + s.shop, "FOREIGN_URL=" + s.foreign}, extra...)
}

// embedMessage is one postMessage a window received, as recordMessages saw it.
type embedMessage struct {
	At   string
	Top  bool
	From string
	Data map[string]any
}

func (m embedMessage) typ() string { s, _ := m.Data["type"].(string); return s }

func embedUserToken(t *testing.T, sub string) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub}).SignedString([]byte(embedUserSecret))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// embedShopScenario: the line goes live in the shop's frame at the right
// height; updates reach the shop only from the waitroom's origin; admission
// resolves the SDK's promise with a token that verifies, and the example
// shop takes it to checkout.
// With pow, the room asks for proof of work once the others are in line:
// the frame solves its challenge in Web Workers before it takes its place.
func embedShopScenario(t *testing.T, kit browserKit, pow bool) {
	site := startEmbedSite(t)
	settings := func(paused bool) queue.Settings {
		s := site.settings(paused)
		if pow {
			s.BotProtection = queue.BotProtection{ProofOfWork: queue.ProofOfWorkOn, PowCost: queue.DefaultPowCost}
		}
		return s
	}
	site.putRoom(site.settings(true))
	const ahead = 3
	site.enterOthers(ahead)
	site.putRoom(settings(true))

	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	sc := kit.startScript(ctx, t, "embed-shop", site.browserSite, site.env()...)
	var rd struct {
		Ticket   string
		Position int64
	}
	sc.awaitReady(ctx, &rd)
	if st := site.stats(); st["entered_total"] != ahead+1 {
		t.Errorf("stats %v: want the others and the shop's visitor", st)
	}
	site.putRoom(settings(false))
	var v struct {
		Ticket, FrameURL, FinalURL string
		Position                   int64
		FrameHeight, ContentHeight float64
		Messages                   []embedMessage
		Demo                       []struct{ Text, Token string }
		Navigations                []string
		Foreign, PageErrors        []string
	}
	sc.wait(&v)
	if len(v.Foreign) > 0 || len(v.PageErrors) > 0 {
		t.Errorf("requests off our servers %q, page errors %q", v.Foreign, v.PageErrors)
	}
	if rd.Position != ahead+1 || v.Ticket != rd.Ticket {
		t.Errorf("embedded at %d with ticket %s (RESULT %s): want place %d", rd.Position, rd.Ticket, v.Ticket, ahead+1)
	}
	if !strings.HasPrefix(v.FrameURL, site.waitroom+"/embed/rooms/"+browserRoom+"?") || !strings.Contains(v.FrameURL, "parent=") {
		t.Errorf("frame at %s", v.FrameURL)
	}
	if v.ContentHeight < 100 || v.FrameHeight < v.ContentHeight-1 || v.FrameHeight > v.ContentHeight+1 {
		t.Errorf("frame %.1f px tall for %.1f px of content: want the height to follow the content", v.FrameHeight, v.ContentHeight)
	}

	// What the shop's window heard: all from the waitroom, places falling,
	// one admission, whose token is the one the promise resolved with.
	var positions []int64
	var admitted []embedMessage
	for _, m := range v.Messages {
		if !m.Top {
			if m.typ() != "waitroom:init" || m.From != site.shop {
				t.Errorf("the frame heard %s from %s", m.typ(), m.From)
			}
			continue
		}
		if m.From != site.waitroom {
			t.Errorf("the shop heard %s from %s", m.typ(), m.From)
			continue
		}
		switch m.typ() {
		case "waitroom:update":
			if m.Data["ticket"] != v.Ticket {
				t.Errorf("update for ticket %v", m.Data["ticket"])
			}
			if m.Data["state"] == "waiting" {
				if p := int64(m.Data["position"].(float64)); len(positions) == 0 || positions[len(positions)-1] != p {
					positions = append(positions, p)
				}
			}
		case "waitroom:admitted":
			admitted = append(admitted, m)
		}
	}
	t.Logf("places heard by the shop %v; %d admissions; demo said %+v", positions, len(admitted), v.Demo)
	if len(positions) < 2 || positions[0] != ahead+1 || !slices.IsSortedFunc(positions, func(a, b int64) int { return int(b - a) }) {
		t.Errorf("places heard %v: want from %d falling", positions, ahead+1)
	}
	if len(admitted) != 1 {
		t.Fatalf("%d admitted messages, want one", len(admitted))
	}
	a := admitted[0].Data
	tok, _ := a["token"].(string)
	// The redirect carries a one-time hand-off code, never the token.
	redirect, _ := a["redirect_url"].(string)
	if a["orderable_at"] == nil || !strings.HasPrefix(redirect, site.waitroom+"/shop?wr_code=") || strings.Contains(redirect, "wr_token") {
		t.Errorf("admitted message %v: want orderable_at and the absolute checkout URL with a hand-off code", a)
	}
	var resolved string
	for _, d := range v.Demo {
		if d.Token != "" {
			resolved = d.Token
		}
	}
	if tok == "" || resolved != tok {
		t.Fatalf("the promise resolved with %q, the message said %q", resolved, tok)
	}
	verdict, err := site.line.Verify(context.Background(), tok, browserRoom)
	if err != nil || !verdict.Valid || verdict.Claims.TicketID != v.Ticket {
		t.Errorf("token verdict %+v, %v: want valid for ticket %s", verdict, err, v.Ticket)
	}
	if v.FinalURL != site.waitroom+"/shop" || !slices.Contains(v.Navigations, redirect) {
		t.Errorf("ended at %s after %q: want checkout through the admission's redirect_url", v.FinalURL, v.Navigations)
	}
}

// embedForeignScenario: a page not in allowed_embedders cannot frame the
// line, neither as itself nor claiming the shop's origin, and hears nothing.
func embedForeignScenario(t *testing.T, kit browserKit) {
	site := startEmbedSite(t)
	site.putRoom(site.settings(true))
	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	var v struct {
		Frames    []string
		Responses []struct {
			Parent string
			Status int
			CSP    string
		}
		Messages              []embedMessage
		Enters, ConsoleErrors []string
		Foreign               []string
	}
	kit.startScript(ctx, t, "embed-foreign", site.browserSite, site.env()...).wait(&v)
	t.Logf("frames %q; responses %+v; console %q", v.Frames, v.Responses, v.ConsoleErrors)
	if len(v.Foreign) > 0 {
		t.Errorf("requests off our servers %q", v.Foreign)
	}
	if len(v.Frames) != 2 || v.Frames[0] != "chrome-error://chromewebdata/" || v.Frames[1] != "chrome-error://chromewebdata/" {
		t.Errorf("frames at %q: want both refused by the browser", v.Frames)
	}
	want := map[string]struct {
		status int
		csp    string
	}{site.foreign: {403, "frame-ancestors 'self'"}, site.shop: {200, "frame-ancestors " + site.shop}}
	for _, r := range v.Responses {
		w, ok := want[r.Parent]
		if !ok || r.Status != w.status || r.CSP != w.csp {
			t.Errorf("embed page for parent %s: %d %q", r.Parent, r.Status, r.CSP)
		}
		delete(want, r.Parent)
	}
	if len(want) > 0 {
		t.Errorf("no embed page asked for %v", want)
	}
	if len(v.Messages) > 0 || len(v.Enters) > 0 {
		t.Errorf("the foreign page heard %+v and the frames entered %q: want nothing", v.Messages, v.Enters)
	}
	if st := site.stats(); st["entered_total"] != 0 {
		t.Errorf("stats %v: nobody should have entered", st)
	}
}

// embedParentScenario: a foreign frame's init is ignored; the shop's user
// token puts the embed on the place the user already holds from a top-level
// tab, and nobody else entered.
func embedParentScenario(t *testing.T, kit browserKit) {
	site := startEmbedSite(t)
	site.putRoom(site.settings(true))
	const ahead = 2
	site.enterOthers(ahead)
	alice, mallory := embedUserToken(t, "alice"), embedUserToken(t, "mallory")
	tab, _, err := site.line.Enter(context.Background(), browserRoom, "u:alice") // the top-level tab
	if err != nil || tab.Position != ahead+1 {
		t.Fatalf("alice's tab: %+v %v", tab, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	var v struct {
		Ticket     string
		Position   int64
		Received   []struct{ At, From, Type string }
		Foreign    []string
		PageErrors []string
	}
	kit.startScript(ctx, t, "embed-parent", site.browserSite,
		site.env("USER_TOKEN="+alice, "FOREIGN_USER_TOKEN="+mallory)...).wait(&v)
	t.Logf("the frames received %+v", v.Received)
	if len(v.Foreign) > 0 || len(v.PageErrors) > 0 {
		t.Errorf("requests off our servers %q, page errors %q", v.Foreign, v.PageErrors)
	}
	if v.Ticket != tab.ID || v.Position != ahead+1 {
		t.Errorf("the embed holds ticket %s at %d; alice's tab holds %s at %d: want one place", v.Ticket, v.Position, tab.ID, ahead+1)
	}
	// The foreign init must have come first, or ignoring it proves nothing.
	from := func(origin string) func(r struct{ At, From, Type string }) bool {
		return func(r struct{ At, From, Type string }) bool {
			return r.At == site.waitroom && r.From == origin && r.Type == "waitroom:init"
		}
	}
	if f, s := slices.IndexFunc(v.Received, from(site.foreign)), slices.IndexFunc(v.Received, from(site.shop)); f < 0 || s < 0 || f > s {
		t.Errorf("the line received %+v: want the foreign init first, then the shop's", v.Received)
	}
	if st := site.stats(); st["entered_total"] != ahead+1 {
		t.Errorf("stats %v: want %d entered, mallory not among them", st, ahead+1)
	}
}

// embedReloadScenario: a reload keeps the embedded place when the browser
// blocks third-party cookies (the partitioned cookie carries it) or refuses
// every cookie of the waitroom (the key kept by the SDK carries it).
func embedReloadScenario(t *testing.T, kit browserKit, cookies string) {
	site := startEmbedSite(t)
	site.putRoom(site.settings(true))
	const ahead = 2
	site.enterOthers(ahead)
	ctx, cancel := context.WithTimeout(context.Background(), browserScenarioTimeout)
	defer cancel()
	type look struct {
		Ticket     string
		Position   int64
		Mode       string
		StoredKeys int
	}
	var v struct {
		Before, After look
		Loads         []struct {
			Cookie, KeyHeader bool
			WS                []struct{ Key bool }
		}
		Foreign, PageErrors []string
	}
	kit.startScript(ctx, t, "embed-reload", site.browserSite, site.env("COOKIES="+cookies)...).wait(&v)
	t.Logf("before %+v, after %+v, loads %+v", v.Before, v.After, v.Loads)
	if len(v.Foreign) > 0 || len(v.PageErrors) > 0 {
		t.Errorf("requests off our servers %q, page errors %q", v.Foreign, v.PageErrors)
	}
	if v.Before.Ticket == "" || v.After.Ticket != v.Before.Ticket || v.Before.Position != ahead+1 || v.After.Position != ahead+1 {
		t.Errorf("before %+v, after %+v: want the same ticket at place %d", v.Before, v.After, ahead+1)
	}
	if v.Before.StoredKeys != 1 || v.After.Mode != "ws" {
		t.Errorf("%d keys stored in the shop's localStorage, live on %q after the reload", v.Before.StoredKeys, v.After.Mode)
	}
	if len(v.Loads) != 2 || len(v.Loads[0].WS) == 0 || len(v.Loads[1].WS) == 0 {
		t.Fatalf("loads %+v: want two, each with a WebSocket", v.Loads)
	}
	reload := v.Loads[1]
	switch cookies {
	case "thirdparty":
		// Chromium keeps partitioned cookies with third-party cookies blocked:
		// the cookie carries the place and the key stays out of URLs.
		if !reload.Cookie || reload.WS[0].Key || v.Loads[0].WS[0].Key {
			t.Errorf("reload %+v: want the partitioned cookie sent and no key in push URLs", reload)
		}
	case "blocked":
		if reload.Cookie || !reload.KeyHeader || !reload.WS[0].Key {
			t.Errorf("reload %+v: want no cookie, the key in a header and in the push URL", reload)
		}
	}
	if st := site.stats(); st["entered_total"] != ahead+1 {
		t.Errorf("stats %v: want %d entered, one ticket for the visitor", st, ahead+1)
	}
}
