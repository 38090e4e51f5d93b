package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func (e *env) page(c *http.Client, path string, hdr ...string) (*http.Response, *goquery.Document) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.url+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return res, doc
}

func testid(doc *goquery.Document, id string) *goquery.Selection {
	return doc.Find(`[data-testid="` + id + `"]`)
}

func visible(doc *goquery.Document, id string) bool {
	s := testid(doc, id)
	_, hidden := s.Attr("hidden")
	return s.Length() == 1 && !hidden
}

func TestWaitingPageInBothLanguages(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"paused": true, "title": "Sneaker drop", "message": "Hold tight", "theme_color": "#0a7d3b"}`)
	for i := range 1233 { // ahead of the page's visitor, straight into the line: HTTP is not the test
		if _, _, err := e.line.Enter(context.Background(), "sale", fmt.Sprintf("v:ahead-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	b := e.browser()
	res, doc := e.page(b, "/rooms/sale", "Accept-Language", "en-US,en;q=0.9")
	if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %v", res.StatusCode, res.Header)
	}
	if res.Header.Get("Content-Security-Policy") != "frame-ancestors 'self'" {
		t.Fatalf("CSP %q", res.Header.Get("Content-Security-Policy"))
	}
	if got := testid(doc, "room-title").Text(); got != "Sneaker drop" {
		t.Fatalf("title %q", got)
	}
	if got := testid(doc, "room-message").Text(); got != "Hold tight" {
		t.Fatalf("message %q", got)
	}
	if !visible(doc, "waiting") || visible(doc, "admitted") {
		t.Fatal("waiting block not the visible one")
	}
	if got := testid(doc, "position").Text(); !strings.Contains(got, "1,234") {
		t.Fatalf("position %q, want 1,234 formatted for English", got)
	}
	if live, _ := testid(doc, "position-live").Attr("aria-live"); live != "polite" {
		t.Fatalf("aria-live %q", live)
	}
	if !visible(doc, "paused-notice") {
		t.Fatal("paused room without the paused notice")
	}
	if !strings.Contains(doc.Find("noscript").Text(), `http-equiv="refresh"`) {
		t.Fatal("no meta refresh for visitors without JavaScript")
	}
	if src, _ := doc.Find(`script[src^="/static/"]`).Attr("src"); src == "" {
		t.Fatal("no hashed client script")
	} else if r := e.do(nil, "GET", src, ""); r.status != 200 || !strings.Contains(r.header.Get("Cache-Control"), "immutable") {
		t.Fatalf("static %s: %d %v", src, r.status, r.header)
	}

	// Same visitor, Korean: the same place, Korean words.
	_, ko := e.page(b, "/rooms/sale?lang=ko")
	if lang, _ := ko.Find("html").Attr("lang"); lang != "ko" {
		t.Fatalf("html lang %q", lang)
	}
	if testid(ko, "position").Text() != testid(doc, "position").Text() {
		t.Fatalf("reload moved the place: %q vs %q", testid(ko, "position").Text(), testid(doc, "position").Text())
	}
	if ko.Find("h2").First().Text() == doc.Find("h2").First().Text() {
		t.Fatalf("Korean heading %q equals English", ko.Find("h2").First().Text())
	}
	_, acceptKo := e.page(e.browser(), "/rooms/sale", "Accept-Language", "ko-KR,ko;q=0.9,en;q=0.5")
	if lang, _ := acceptKo.Find("html").Attr("lang"); lang != "ko" {
		t.Fatalf("Accept-Language ko gave %q", lang)
	}
}

func TestAdmittedPageLeadsToCheckout(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"target_url": "/shop", "session_ttl_s": 600, "arrival_window_s": 120}`)
	_, doc := e.page(e.browser(), "/rooms/sale")
	if !visible(doc, "admitted") {
		t.Fatal("fast-tracked visitor does not see the admitted block")
	}
	if held := testid(doc, "admitted-held").Text(); !strings.Contains(held, "10 minutes") || !strings.Contains(held, "2 minutes") {
		t.Errorf("the admitted page says %q: want the turn held 10 minutes and 2 minutes to arrive", held)
	}
	href, _ := testid(doc, "go-link").Attr("href")
	if !strings.HasPrefix(href, "/shop?wr_code=h.") {
		t.Fatalf("go link %q", href)
	}
	if ns := doc.Find("noscript").Text(); !strings.Contains(ns, `http-equiv="refresh"`) || !strings.Contains(ns, "/shop?wr_code=h.") {
		t.Fatalf("no-JS redirect %q", ns)
	}
}

func TestRoomPageStates(t *testing.T) {
	e := newEnv(t)
	e.putRoom("ended", `{"ends_at": "2000-01-01T00:00:00Z", "shop_url": "https://shop.example/drops"}`)
	res, doc := e.page(nil, "/rooms/ended")
	if res.StatusCode != 200 || !visible(doc, "closed") {
		t.Fatalf("closed room: %d", res.StatusCode)
	}
	// The end of a visit leads back to the shop, and thanks once.
	closed := testid(doc, "closed")
	if href, _ := closed.Find(`[data-testid="shop-link"]`).Attr("href"); href != "https://shop.example/drops" {
		t.Errorf("closed page's link back to the shop %q", href)
	}
	if n := strings.Count(closed.Text(), "Thank you for waiting"); n != 1 {
		t.Errorf("the closed page thanks %d times: %q", n, closed.Text())
	}
	// Sold out with the operator's own message: no second thanks of ours.
	e.putRoom("gone", `{"sold_out": true, "sold_out_message": "All gone - thank you for waiting!", "shop_url": "https://shop.example/"}`)
	_, doc = e.page(e.browser(), "/rooms/gone")
	if !visible(doc, "sold_out") || visible(doc, "sold-out-thanks") || !visible(doc, "sold-out-message") {
		t.Errorf("sold out page: block %v, our thanks %v, the operator's message %v", visible(doc, "sold_out"), visible(doc, "sold-out-thanks"), visible(doc, "sold-out-message"))
	}
	if href, _ := testid(doc, "sold_out").Find(`[data-testid="shop-link"]`).Attr("href"); href != "https://shop.example/" {
		t.Errorf("sold out page's link back to the shop %q", href)
	}
	res, doc = e.page(nil, "/rooms/missing")
	if res.StatusCode != 404 || testid(doc, "not-found").Length() != 1 {
		t.Fatalf("unknown room: %d", res.StatusCode)
	}
	res, doc = e.page(nil, "/rooms/missing?lang=ko")
	if lang, _ := doc.Find("html").Attr("lang"); res.StatusCode != 404 || lang != "ko" {
		t.Fatalf("unknown room in Korean: %d %s", res.StatusCode, lang)
	}
}

func TestExpiredTicketOffersEnterAgain(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"paused": true}`)
	b := e.browser()
	e.do(b, "POST", "/api/rooms/sale/enter", "")
	r := e.do(b, "POST", "/api/rooms/sale/enter", "")
	e.do(b, "DELETE", "/api/rooms/sale/tickets/"+r.body["ticket"].(string), "")
	// The page enters again: a left ticket is replaced by a new place.
	_, doc := e.page(b, "/rooms/sale")
	if !visible(doc, "waiting") {
		t.Fatal("re-entry after leaving does not wait in line")
	}
	href, _ := testid(doc, "enter-again").Attr("href")
	if !strings.HasPrefix(href, "/rooms/sale?again=1") {
		t.Fatalf("enter-again link %q", href)
	}
}
