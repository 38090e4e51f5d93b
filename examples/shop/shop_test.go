package shop_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// testLogger shows the shop's log with a failing test's output, or with -v.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// TestCheckoutVerifiesThroughJWKSAndCompletes: a token from the line opens
// checkout (not before its nbf), placing the order frees the slot, and the
// token then stops verifying.
func TestCheckoutVerifiesThroughJWKSAndCompletes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	keys, _ := token.Generate()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys,
		queue.LineOptions{Clock: clock, Jitter: func(max time.Duration) time.Duration { return max / 2 }})
	s := queue.DefaultSettings()
	s.JitterMS = 3000
	if err := line.PutRoom(ctx, "demo", s); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	keys.Issuer = ts.URL
	sh, err := shop.Open(ctx, shop.Config{WaitroomURL: ts.URL, Room: "demo", Now: clock.Now,
		DataDir: t.TempDir(), Stock: 3, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	mux.Handle("/shop", sh.Handler())
	mux.Handle("/shop/", sh.Handler())
	mux.Handle("/", server.New(line, server.Config{AdminToken: "admin-token-0123456789"}))

	tk, _, err := line.Enter(ctx, "demo", "v:0123456789abcdef0123456789abcdef")
	if err != nil || tk.State != vocab.StateAdmitted {
		t.Fatalf("enter: %+v %v", tk, err)
	}
	tok, _ := line.Token(tk)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	page := func(method, path string) (int, *goquery.Document) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, nil)
		res, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		doc, err := goquery.NewDocumentFromReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, doc
	}
	status := func(doc *goquery.Document) string {
		v, _ := doc.Find(`[data-testid="shop"]`).Attr("data-status")
		return v
	}

	if code, doc := page("GET", "/shop"); code != 403 || status(doc) != "need_ticket" {
		t.Fatalf("no token: %d %s", code, status(doc))
	}
	// Orderable 1.5 s after admission: before that the jitter holds.
	if code, doc := page("GET", "/shop?wr_token="+tok); code != 425 || status(doc) != "too_early" {
		t.Fatalf("before nbf: %d %s", code, status(doc))
	} else if wait, _ := doc.Find(`[data-testid="shop-too-early"]`).Attr("data-wait"); wait != "2" ||
		doc.Find(`head > meta[http-equiv="refresh"]`).Length() != 0 {
		// The countdown counts in the page; only without script does a
		// meta refresh reload it.
		t.Fatalf("before nbf: countdown from %q, %d meta refresh outside noscript", wait, doc.Find(`head > meta[http-equiv="refresh"]`).Length())
	}
	clock.Advance(2 * time.Second)
	code, doc := page("GET", "/shop")
	if code != 200 || status(doc) != "checkout" || doc.Find(`[data-testid="shop-complete"]`).Length() != 1 {
		t.Fatalf("checkout: %d %s", code, status(doc))
	}
	if n := doc.Find(`[data-testid="shop-stock"]`).AttrOr("data-stock", ""); n != "3" {
		t.Fatalf("checkout shows %q in stock, want 3", n)
	}
	if code, doc := page("POST", "/shop/complete"); code != 200 || status(doc) != "placed" {
		t.Fatalf("complete: %d %s", code, status(doc))
	}
	if n := stockOf(t, sh.Store(), shop.DropID); n != 2 {
		t.Fatalf("stock after the order: %d, want 2", n)
	}
	v, err := line.Verify(ctx, tok, "demo")
	if err != nil || v.Valid || v.Reason != "completed" {
		t.Fatalf("after the order: %+v %v", v, err)
	}
	st, _ := line.Stats(ctx, "demo", clock.Now())
	if st.Active != 0 || st.CompletedTotal != 1 {
		t.Fatalf("slot not freed: %+v", st)
	}

	// A token signed by someone else's key is refused.
	other, _ := token.Generate()
	forged, _ := other.Sign(token.EntryClaims{Issuer: ts.URL, Room: "demo", Subject: "x", TicketID: tk.ID, IssuedAt: clock.Now(), NotBefore: clock.Now(), ExpiresAt: clock.Now().Add(time.Hour)})
	if code, doc := page("GET", "/shop?wr_token="+forged); code != 403 || status(doc) != "refused" {
		t.Fatalf("forged: %d %s", code, status(doc))
	}
}

// TestCheckoutRefusesForeignTokens: a token of another room, of another
// signer or past its turn is refused in the shopper's language, in words,
// never with the verifier's error, and only a token of this room's own line
// gets a way back into it.
func TestCheckoutRefusesForeignTokens(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	keys, _ := token.Generate()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	line := queue.NewLine(redisstore.New(redistest.Shared(t).Client(t), redistest.Prefix(t)), keys, queue.LineOptions{Clock: clock})
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	keys.Issuer = ts.URL
	sh, err := shop.Open(ctx, shop.Config{WaitroomURL: ts.URL, Room: "demo", Now: clock.Now, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	mux.Handle("/shop", sh.Handler())
	mux.Handle("/", server.New(line, server.Config{AdminToken: "admin-token-0123456789"}))

	now := clock.Now()
	claims := func(room string, exp time.Time) token.EntryClaims {
		return token.EntryClaims{Issuer: ts.URL, Room: room, Subject: "x", TicketID: "0123456789abcdef0123456789abcdef",
			IssuedAt: now.Add(-time.Hour), NotBefore: now.Add(-time.Hour), ExpiresAt: exp}
	}
	sign := func(k *token.Keyset, c token.EntryClaims) string {
		tok, err := k.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	other, _ := token.Generate()
	other.Issuer = ts.URL
	for _, tc := range []struct {
		name, tok, reason string
		way               bool // a link back into this room's line
		en, ko            string
	}{
		{"other room", sign(keys, claims("other-sale", now.Add(time.Hour))), "wrong_room", false, "another sale", "다른 판매"},
		{"expired", sign(keys, claims("demo", now.Add(-time.Minute))), "expired", true, "has ended", "차례가 끝났습니다"},
		{"other signer", sign(other, claims("demo", now.Add(time.Hour))), "forged", false, "could not be confirmed", "확인할 수 없어"},
		{"garbage", "not.a.token", "malformed", false, "could not be confirmed", "확인할 수 없어"},
	} {
		for _, lang := range []string{"en", "ko"} {
			jar, _ := cookiejar.New(nil)
			req, _ := http.NewRequest("GET", ts.URL+"/shop?wr_token="+tc.tok, nil)
			req.Header.Set("Accept-Language", lang)
			res, err := (&http.Client{Jar: jar}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			doc, _ := goquery.NewDocumentFromReader(strings.NewReader(string(raw)))
			main := doc.Find(`[data-testid="shop"]`)
			if res.StatusCode != 403 || main.AttrOr("data-status", "") != "refused" || main.AttrOr("data-reason", "") != tc.reason {
				t.Errorf("%s (%s): %d %s/%s, want 403 refused/%s", tc.name, lang, res.StatusCode,
					main.AttrOr("data-status", ""), main.AttrOr("data-reason", ""), tc.reason)
				continue
			}
			want := map[string]string{"en": tc.en, "ko": tc.ko}[lang]
			text := doc.Find(`[data-testid="shop-refusal"]`).Text()
			if got := doc.Find("html").AttrOr("lang", ""); got != lang || !strings.Contains(text, want) {
				t.Errorf("%s (%s): lang %q, message %q, want it to say %q", tc.name, lang, got, text, want)
			}
			for _, raw := range []string{"token", "audience", "signature", "jwt", "expired"} {
				if strings.Contains(strings.ToLower(text), raw) {
					t.Errorf("%s (%s): the message %q reads like the verifier's error (%q)", tc.name, lang, text, raw)
				}
			}
			if links := doc.Find(`a[href*="/rooms/"]`).Length(); (links > 0) != tc.way {
				t.Errorf("%s (%s): %d links into a line, want a way back %v", tc.name, lang, links, tc.way)
			}
		}
	}
}
