package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// TestNoCheckoutPage: a new room's default target_url is waitroom's own
// page saying the room has no checkout yet (not the demo shop), in the
// visitor's language, naming the room from the token it was sent with, and
// telling the operator where to set one. Names that are not room ids are
// not echoed.
func TestNoCheckoutPage(t *testing.T) {
	if got := queue.DefaultSettings().TargetURL; got != server.NoCheckoutPath {
		t.Fatalf("default target_url %q, want %q", got, server.NoCheckoutPath)
	}
	keys, _ := token.Generate()
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys, queue.LineOptions{})
	srv := server.New(line, server.Config{AdminToken: "admin-token-0123456789"})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	now := time.Now()
	tok, err := keys.Sign(token.EntryClaims{Room: "spring-drop", Subject: "x", TicketID: "0123456789abcdef0123456789abcdef",
		IssuedAt: now, NotBefore: now, ExpiresAt: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	get := func(query, lang string) (*http.Response, *goquery.Document) {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), "GET", ts.URL+server.NoCheckoutPath+"?"+query, nil)
		req.Header.Set("Accept-Language", lang)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		doc, err := goquery.NewDocumentFromReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, doc
	}
	for _, tc := range []struct{ lang, heading, body string }{
		{"en", "no checkout yet", "“spring-drop”"},
		{"ko", "결제 페이지가 없습니다", "“spring-drop” 대기실"},
	} {
		res, doc := get("wr_token="+url.QueryEscape(tok), tc.lang)
		page := doc.Find(`[data-testid="no-checkout"]`)
		if res.StatusCode != 200 || page.AttrOr("data-room", "") != "spring-drop" || doc.Find("html").AttrOr("lang", "") != tc.lang {
			t.Fatalf("%s: %d room %q lang %q", tc.lang, res.StatusCode, page.AttrOr("data-room", ""), doc.Find("html").AttrOr("lang", ""))
		}
		if h := doc.Find("h1").Text(); !strings.Contains(h, tc.heading) || !strings.Contains(page.Text(), tc.body) {
			t.Errorf("%s: heading %q, text %q", tc.lang, h, page.Text())
		}
		if op := doc.Find(`[data-testid="no-checkout-operator"]`).Text(); !strings.Contains(op, "target_url") || !strings.Contains(op, "/admin/api/rooms/spring-drop") {
			t.Errorf("%s: operator hint %q", tc.lang, op)
		}
		if res.Header.Get("Referrer-Policy") != "no-referrer" || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: headers %v", tc.lang, res.Header)
		}
		if doc.Find(`a[href*="/rooms/"], a[href*="/shop"]`).Length() != 0 {
			t.Errorf("%s: the page links into a line or the demo shop", tc.lang)
		}
	}
	if _, doc := get("room=autumn", "en"); doc.Find(`[data-testid="no-checkout"]`).AttrOr("data-room", "") != "autumn" {
		t.Error("?room= is not shown")
	}
	for _, q := range []string{"room=" + url.QueryEscape("<b>x</b>"), "wr_token=garbage", "room=" + strings.Repeat("a", 65), ""} {
		res, doc := get(q, "en")
		page := doc.Find(`[data-testid="no-checkout"]`)
		if res.StatusCode != 200 || page.AttrOr("data-room", "?") != "" || doc.Find("b").Length() != 0 {
			t.Errorf("?%s: %d room %q", q, res.StatusCode, page.AttrOr("data-room", "?"))
		}
	}
}

// FuzzNoCheckoutPage: whatever the query, the page answers 200 and names
// either no room or a valid room id.
func FuzzNoCheckoutPage(f *testing.F) {
	keys, _ := token.Generate()
	tok, _ := keys.Sign(token.EntryClaims{Room: "sale", Subject: "x", TicketID: "0123456789abcdef0123456789abcdef",
		IssuedAt: time.Unix(0, 0), NotBefore: time.Unix(0, 0), ExpiresAt: time.Unix(60, 0)})
	for _, seed := range []string{"wr_token=" + tok, "room=sale", "room=%3Cscript%3E", "wr_token=a.b.c", "wr_token=e30.e30.", "room=&wr_token=", "lang=ko&room=x"} {
		f.Add(seed)
	}
	line := queue.NewLine(redisstore.New(redistest.Shared(f).Client(f), redistest.Prefix(f)), keys, queue.LineOptions{})
	srv := server.New(line, server.Config{AdminToken: "admin-token-0123456789"})
	f.Fuzz(func(t *testing.T, query string) {
		req := httptest.NewRequest("GET", "/checkout-not-configured", nil)
		req.URL.RawQuery = query
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		doc, err := goquery.NewDocumentFromReader(rec.Body)
		if rec.Code != 200 || err != nil {
			t.Fatalf("?%q: %d %v", query, rec.Code, err)
		}
		if room := doc.Find(`[data-testid="no-checkout"]`).AttrOr("data-room", ""); room != "" && !queue.ValidRoomID(room) {
			t.Fatalf("?%q shows room %q", query, room)
		}
	})
}
