package middleware_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/gate/middleware"
	"github.com/waitroom/waitroom/gate/middleware/echomw"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
)

func TestMiddlewareSendsBrowsersToThePageAndAPIClientsA429(t *testing.T) {
	both(t, func(t *testing.T, kind string) {
		f := newFixture(t, kind, func(s *queue.Settings) { s.Paused = true }, nil)
		res := f.do(client(nil), "GET", "/checkout/cart", "Accept: text/html,*/*;q=0.8")
		if res.status != http.StatusFound || res.header.Get("Location") != f.wr+"/rooms/"+room {
			t.Fatalf("browser: %d to %q, want 302 to waitroom's waiting page", res.status, res.header.Get("Location"))
		}
		if cookie(res, "wr_return") == nil {
			t.Error("no wr_return cookie")
		}
		for _, accept := range []string{"*/*", "application/json", "application/problem+json", ""} {
			c := jarClient()
			var hdr []string
			if accept != "" {
				hdr = append(hdr, "Accept: "+accept)
			}
			first := f.do(c, "POST", "/api/orders", hdr...)
			if first.status != http.StatusTooManyRequests {
				t.Fatalf("Accept %q: status %d, want 429: %s", accept, first.status, first.body)
			}
			if ra, err := strconv.Atoi(first.header.Get("Retry-After")); err != nil || ra < 1 {
				t.Errorf("Retry-After %q", first.header.Get("Retry-After"))
			}
			j := first.json
			if id, _ := j["ticket"].(string); len(id) != 32 || j["waiting_room_url"] != f.wr+"/rooms/"+room || j["position"].(float64) < 1 {
				t.Errorf("Accept %q: body %s", accept, first.body)
			}
			again := f.do(c, "POST", "/api/orders", hdr...)
			if again.json["ticket"] != j["ticket"] {
				t.Errorf("asking again: ticket %v, want the same place %v", again.json["ticket"], j["ticket"])
			}
		}
		if n := len(f.shopSaw()); n != 0 {
			t.Errorf("the shop's handlers saw %d requests, want none", n)
		}
		if res := f.do(client(nil), "GET", "/about"); res.status != 200 || res.body != "shop GET /about" {
			t.Errorf("unprotected path: %d %q", res.status, res.body)
		}
	})
}

// Offline verification checks nbf to the millisecond: a token 400 ms early
// waits 400 ms, where jwt's default second precision would let it in.
func TestMiddlewareVerifiesOfflineToTheMillisecond(t *testing.T) {
	both(t, func(t *testing.T, kind string) {
		f := newFixture(t, kind, nil, nil)
		tk, tok := f.admit(vid) // nbf = t0 + 500 ms
		f.pause()
		f.clock.Advance(100 * time.Millisecond)
		before := f.waitroomAPICalls()

		res := f.do(client(nil), "POST", "/api/orders", "Accept: application/json", "Authorization: Bearer "+tok, owner)
		if res.status != http.StatusTooEarly || res.json["retry_after_ms"] != 400.0 || res.header.Get("Retry-After") != "1" {
			t.Fatalf("status %d, Retry-After %q, body %s; want 425, 1 s, 400 ms", res.status, res.header.Get("Retry-After"), res.body)
		}
		if res.json["ticket"] != tk.ID || res.json["orderable_at"] != "2026-11-29T12:00:00.500Z" {
			t.Errorf("body %s", res.body)
		}
		f.clock.Advance(400 * time.Millisecond)
		res = f.do(client(nil), "GET", "/checkout/x", "Accept: application/json", "Authorization: Bearer "+tok, owner)
		if res.status != 200 {
			t.Fatalf("at nbf: %d %s", res.status, res.body)
		}
		seen := f.shopSaw()
		if got := seen[len(seen)-1].Header.Get("Waitroom-Ticket"); got != tk.ID {
			t.Errorf("Waitroom-Ticket %q, want %s", got, tk.ID)
		}
		// Its first acceptance is reported to waitroom (the visitor
		// arrived: arrival_window_s); after that it is offline.
		if n := f.waitroomAPICalls() - before; n != 1 {
			t.Errorf("first acceptance asked waitroom %d times, want once", n)
		}
		res = f.do(client(nil), "GET", "/checkout/y", "Accept: application/json", "Authorization: Bearer "+tok, owner)
		if res.status != 200 {
			t.Fatalf("again: %d %s", res.status, res.body)
		}
		if n := f.waitroomAPICalls() - before; n != 1 {
			t.Errorf("offline verification asked waitroom %d times after the first", n-1)
		}
		if s := f.meter.Snapshot(); s.Calls != 2 || s.InFlight != 0 {
			t.Errorf("meter %+v, want the two protected calls", s)
		}
	})
}

// The waiting page sends an admitted browser to target_url?wr_token=,
// which points at the shop: the token moves into a cookie and the browser
// goes back to where it was going.
func TestMiddlewareBrowserComesBack(t *testing.T) {
	both(t, func(t *testing.T, kind string) {
		f := newFixture(t, kind, nil, nil)
		_, tok := f.admit(vid)
		f.clock.Advance(time.Second)
		b := jarClient()
		if res := f.do(b, "GET", "/checkout/cart?size=42", "Accept: text/html"); res.status != http.StatusFound {
			t.Fatalf("status %d", res.status)
		}
		land := f.do(b, "GET", "/checkout/?wr_token="+tok, "Accept: text/html")
		if land.status != http.StatusFound || land.header.Get("Location") != "/checkout/cart?size=42" {
			t.Fatalf("landing: %d to %q", land.status, land.header.Get("Location"))
		}
		if res := f.do(b, "GET", "/checkout/cart?size=42", "Accept: text/html"); res.status != 200 || res.body != "shop GET /checkout/cart?size=42" {
			t.Fatalf("with the cookie: %d %q", res.status, res.body)
		}
	})
}

func TestMiddlewareRefusesBadTokens(t *testing.T) {
	f := newFixture(t, "net/http", nil, nil)
	// A real ticket: the middleware reports its first acceptance to
	// waitroom, which knows whether the ticket holds a slot.
	tk, _ := f.admit(vid)
	f.pause()
	other, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock.Now()
	good := token.EntryClaims{Room: room, Subject: token.VisitorSubject(vid), TicketID: tk.ID,
		NotBefore: now.Add(-time.Second), ExpiresAt: now.Add(time.Minute)}
	// A twin of waitroom's keys that signs for any issuer.
	pem, err := f.keys.PEM()
	if err != nil {
		t.Fatal(err)
	}
	twin, err := token.Parse(pem)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(ks *token.Keyset, c token.EntryClaims) string {
		if c.Issuer == "" {
			c.Issuer = f.wr
		}
		tok, err := ks.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	expired, wrongRoom, wrongIssuer := good, good, good
	expired.NotBefore, expired.ExpiresAt = now.Add(-time.Hour), now.Add(-time.Second)
	wrongRoom.Room = "other"
	wrongIssuer.Issuer = "http://elsewhere.example"
	cases := map[string]string{
		"forged":       sign(other, good),
		"expired":      sign(twin, expired),
		"wrong_room":   sign(twin, wrongRoom),
		"wrong issuer": sign(twin, wrongIssuer),
		"malformed":    "a.b.c",
	}
	if res := f.do(client(nil), "GET", "/checkout/", "Authorization: Bearer "+sign(twin, good), owner); res.status != 200 {
		t.Fatalf("the good token: %d %s", res.status, res.body)
	}
	for name, tok := range cases {
		res := f.do(client(nil), "POST", "/api/orders", "Cookie: wr_token="+tok)
		if res.status != http.StatusTooManyRequests {
			t.Errorf("%s: status %d, want 429", name, res.status)
		}
		if ck := cookie(res, "wr_token"); ck == nil || ck.MaxAge >= 0 {
			t.Errorf("%s: the token cookie was not cleared", name)
		}
	}
	if n := len(f.shopSaw()); n != 1 {
		t.Errorf("the shop saw %d requests, want only the good one", n)
	}
}

func TestMiddlewareCompletePathHandsTheSlotBack(t *testing.T) {
	both(t, func(t *testing.T, kind string) {
		f := newFixture(t, kind, nil, nil)
		_, tok := f.admit(vid)
		f.clock.Advance(time.Second)
		ctx := context.Background()

		res := f.do(client(nil), "POST", "/api/orders", "Authorization: Bearer "+tok, owner, "X-Test-Fail: 1")
		f.busy.Wait()
		if res.status != http.StatusConflict {
			t.Fatalf("status %d", res.status)
		}
		if v, _ := f.line.Verify(ctx, tok, room); !v.Valid {
			t.Fatalf("a failed order freed the slot: %s", v.Reason)
		}
		res = f.do(client(nil), "POST", "/api/orders", "Authorization: Bearer "+tok, owner)
		f.busy.Wait()
		if res.status != http.StatusCreated {
			t.Fatalf("status %d", res.status)
		}
		if v, _ := f.line.Verify(ctx, tok, room); v.Reason != "completed" {
			t.Errorf("after the order: %q, want completed", v.Reason)
		}
		if ck := cookie(res, "wr_token"); ck == nil || ck.MaxAge >= 0 {
			t.Error("the completing answer did not clear the token cookie")
		}
	})
}

// Offline, a completed token verifies until exp (the default, no call per
// request); Online asks waitroom and refuses it at once.
func TestMiddlewareOnlineRefusesCompletedTokens(t *testing.T) {
	for _, online := range []bool{false, true} {
		f := newFixture(t, "net/http", nil, func(c *middleware.Config) { c.Online = online })
		_, tok := f.admit(vid)
		f.clock.Advance(time.Second)
		if res := f.do(client(nil), "GET", "/checkout/", "Authorization: Bearer "+tok, owner); res.status != 200 {
			t.Fatalf("online %v, active token: %d %s", online, res.status, res.body)
		}
		if v, err := f.line.Complete(context.Background(), tok, room); err != nil || !v.Valid {
			t.Fatal(v, err)
		}
		f.pause()
		want := http.StatusOK
		if online {
			want = http.StatusTooManyRequests
		}
		res := f.do(client(nil), "GET", "/checkout/", "Accept: application/json", "Authorization: Bearer "+tok, owner)
		if res.status != want {
			t.Errorf("online %v, completed token: status %d, want %d", online, res.status, want)
		}
		if online && !strings.Contains(res.body, "(completed)") {
			t.Errorf("body %s does not say completed", res.body)
		}
	}
}

// An API client that keeps cookies only asks again: the middleware enters
// it with waitroom under its own visitor id and lets it in at its turn.
func TestMiddlewareAdmitsAnAPIClientThatAsksAgain(t *testing.T) {
	both(t, func(t *testing.T, kind string) {
		f := newFixture(t, kind, nil, nil)
		c := jarClient()
		res := f.do(c, "POST", "/api/orders", "Accept: application/json")
		if res.status != http.StatusTooEarly || res.json["token"] == nil || cookie(res, "wr_vid") == nil {
			t.Fatalf("first ask: %d %s", res.status, res.body)
		}
		f.clock.Advance(time.Duration(res.json["retry_after_ms"].(float64)) * time.Millisecond)
		if res := f.do(c, "POST", "/api/orders", "Accept: application/json"); res.status != http.StatusCreated {
			t.Fatalf("second ask: %d %s", res.status, res.body)
		}
	})
}

func TestMiddlewareWaitroomDown(t *testing.T) {
	mw, err := middleware.New(middleware.Config{WaitroomURL: "http://127.0.0.1:1", Room: room, Credential: "wrs_test", Context: t.Context()})
	if err != nil {
		t.Fatal(err)
	}
	h := mw(http.NotFoundHandler())
	f := &fixture{t: t}
	srv := newServer(t, h)
	f.shop = srv
	res := f.do(client(nil), "GET", "/x", "Accept: application/json")
	if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" || res.json["error"].(map[string]any)["code"] != "unavailable" {
		t.Errorf("status %d %s, want 503 with Retry-After", res.status, res.body)
	}
}

func TestNewChecksItsConfig(t *testing.T) {
	good := middleware.Config{WaitroomURL: "https://wait.example.com/", Room: room, Credential: "wrs_test"}
	if _, err := middleware.New(good); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(*middleware.Config){
		"no waitroom":    func(c *middleware.Config) { c.WaitroomURL = "" },
		"relative":       func(c *middleware.Config) { c.WaitroomURL = "/waitroom" },
		"bad public url": func(c *middleware.Config) { c.PublicURL = "ftp://x" },
		"no room":        func(c *middleware.Config) { c.Room = "" },
		"no credential":  func(c *middleware.Config) { c.Credential = "" },
		"bad protect":    func(c *middleware.Config) { c.Protect = []string{"checkout"} },
		"bad complete":   func(c *middleware.Config) { c.Complete = []string{"/[x"} },
	}
	for name, edit := range bad {
		c := good
		edit(&c)
		if _, err := middleware.New(c); err == nil || !strings.HasPrefix(err.Error(), "gate: middleware: ") {
			t.Errorf("%s: err %v", name, err)
		}
		if _, err := echomw.Middleware(c); err == nil {
			t.Errorf("%s: echo: no error", name)
		}
	}
}
