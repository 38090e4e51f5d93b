package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"

	"github.com/waitroom/waitroom/static"
)

const shopOrigin = "https://shop.example"

// embedEnter enters through the embed API with the given headers and
// returns the answer and the key the server handed out.
func (e *env) embedEnter(room, body string, hdr ...string) (resp, string) {
	e.t.Helper()
	r := e.do(nil, "POST", "/api/rooms/"+room+"/embed/enter", body, hdr...)
	return r, r.header.Get("X-Waitroom-Key")
}

// embedCookie is the wr_ekey cookie r set, whole. Go's cookie jar would not
// send a Secure cookie over plain HTTP, so tests pass it by hand.
func embedCookie(t *testing.T, r resp) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "wr_ekey" {
			return c
		}
	}
	t.Fatalf("no wr_ekey cookie in %v", r.header.Values("Set-Cookie"))
	return nil
}

func TestEmbedPageIsFramedOnlyByAllowedEmbedders(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"title": "Sneaker drop", "allowed_embedders": ["`+shopOrigin+`", "http://localhost:8081"]}`)
	e.putRoom("closed-doors", `{}`)

	res, doc := e.page(nil, "/embed/rooms/sale?parent="+shopOrigin+"&sdk=1&lang=ko")
	if res.StatusCode != 200 || res.Header.Get("Content-Security-Policy") != "frame-ancestors "+shopOrigin {
		t.Fatalf("allowed parent: %d, CSP %q", res.StatusCode, res.Header.Get("Content-Security-Policy"))
	}
	if len(res.Cookies()) != 0 {
		t.Fatalf("the embed page set cookies %v: entering is the script's job", res.Cookies())
	}
	root := doc.Find("[data-waitroom-embed]")
	for attr, want := range map[string]string{"data-parent": shopOrigin, "data-sdk": "1", "data-room": "sale", "data-lang": "ko"} {
		if got, _ := root.Attr(attr); got != want {
			t.Errorf("%s = %q, want %q", attr, got, want)
		}
	}
	if testid(doc, "room-title").Text() != "Sneaker drop" || doc.Find(".site-header").Length() != 0 {
		t.Errorf("compact page: title %q, %d site headers", testid(doc, "room-title").Text(), doc.Find(".site-header").Length())
	}
	if doc.Find(`meta[http-equiv="refresh"]`).Length() != 0 {
		t.Error("the embed must not reload itself: it has no ticket in its URL to come back to")
	}
	if src, _ := doc.Find(`script[src^="/static/embed."]`).Attr("src"); src == "" {
		t.Error("no embed script")
	}
	if !visible(doc, "connecting") || visible(doc, "waiting") || visible(doc, "admitted") {
		t.Error("before the script enters, only 'joining' shows")
	}
	if res, _ := e.page(nil, "/embed/rooms/sale?parent=http://localhost:8081"); res.Header.Get("Content-Security-Policy") != "frame-ancestors http://localhost:8081" {
		t.Errorf("second embedder: CSP %q", res.Header.Get("Content-Security-Policy"))
	}

	for _, path := range []string{
		"/embed/rooms/sale?parent=https://evil.example",
		"/embed/rooms/sale?parent=" + shopOrigin + "/",    // not the origin as a browser writes it
		"/embed/rooms/sale?parent=https://SHOP.example",   // ditto
		"/embed/rooms/sale?parent=" + shopOrigin + ":443", // ditto
		"/embed/rooms/sale",
		"/embed/rooms/closed-doors?parent=" + shopOrigin,
	} {
		res, doc := e.page(nil, path, "Accept", "text/html")
		if res.StatusCode != 403 || res.Header.Get("Content-Security-Policy") != "frame-ancestors 'self'" || !visible(doc, "error") {
			t.Errorf("%s: %d, CSP %q: want a 403 page that no other site may frame", path, res.StatusCode, res.Header.Get("Content-Security-Policy"))
		}
	}
	if res, _ := e.page(nil, "/embed/rooms/nope?parent="+shopOrigin); res.StatusCode != 404 {
		t.Errorf("unknown room: %d", res.StatusCode)
	}
	// Every other page keeps frame-ancestors 'self'.
	for _, path := range []string{"/rooms/sale", "/api/rooms/sale/enter", "/static/waitroom-embed.js", "/healthz"} {
		method := "GET"
		if strings.HasSuffix(path, "/enter") {
			method = "POST"
		}
		if r := e.do(nil, method, path, ""); r.header.Get("Content-Security-Policy") != "frame-ancestors 'self'" {
			t.Errorf("%s %s: CSP %q", method, path, r.header.Get("Content-Security-Policy"))
		}
	}
}

func TestAllowedEmbeddersMustBeOrigins(t *testing.T) {
	e := newEnv(t)
	for _, bad := range []string{`"shop.example"`, `"https://shop.example/"`, `"https://shop.example/cart"`, `"https://*.shop.example"`,
		`"ftp://shop.example"`, `"https://Shop.example"`, `"https://shop.example:443"`, `"http://shop.example:80"`, `"https://u@shop.example"`, `"https://shop.example?x"`} {
		r := e.admin("PUT", "/admin/api/rooms/sale", `{"allowed_embedders": [`+bad+`]}`)
		wantError(t, r, 400, "invalid")
		if f := r.body["error"].(map[string]any)["field"]; f != "allowed_embedders[0]" {
			t.Errorf("%s: field %v", bad, f)
		}
	}
	r := e.admin("PUT", "/admin/api/rooms/sale", `{"allowed_embedders": ["https://shop.example", "http://127.0.0.1:8081", "http://[::1]:8081"]}`)
	if r.status/100 != 2 {
		t.Fatalf("good origins refused: %s", r.raw)
	}
}

// TestEmbedIdentity: the embed's visitor is its key, carried by the
// partitioned cookie or, where the browser refuses that, by the key itself;
// never by the top-level visitor cookie.
func TestEmbedIdentity(t *testing.T) {
	e := newEnv(t)
	e.putRoom("sale", `{"paused": true, "allowed_embedders": ["`+shopOrigin+`"]}`)
	e.putRoom("other", `{"paused": true}`)

	first, key := e.embedEnter("sale", "")
	id, _ := first.body["ticket"].(string)
	if first.status != 200 || first.body["state"] != "waiting" || !strings.HasPrefix(key, "a.") || len(key) != 34 {
		t.Fatalf("first embed enter: %d %s, key %q", first.status, first.raw, key)
	}
	ck := embedCookie(t, first)
	if ck.Value != key || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteNoneMode || !ck.Partitioned ||
		ck.Path != "/api/rooms/sale/embed/" || ck.MaxAge != 86400 {
		t.Fatalf("embed cookie %+v: want the key, Secure, HttpOnly, SameSite=None, Partitioned, for this room's embed API", ck)
	}
	cookie := "wr_ekey=" + key

	// A reload: by the cookie, or by the key alone (cookies refused), the same place.
	if r, k := e.embedEnter("sale", "", "Cookie", cookie); r.body["ticket"] != id || k != key {
		t.Errorf("re-enter by cookie: %s, key %q", r.raw, k)
	}
	if r, k := e.embedEnter("sale", "", "X-Waitroom-Key", key); r.body["ticket"] != id || k != key {
		t.Errorf("re-enter by key: %s, key %q", r.raw, k)
	}
	// The key wins over a stale cookie; a garbled key makes a new visitor, not a stuck one.
	if r, _ := e.embedEnter("sale", "", "X-Waitroom-Key", key, "Cookie", "wr_ekey=a.00000000000000000000000000000000"); r.body["ticket"] != id {
		t.Errorf("key and another cookie: %s", r.raw)
	}
	if r, k := e.embedEnter("sale", "", "X-Waitroom-Key", "a.nothex"); r.status != 200 || r.body["ticket"] == id || k == key {
		t.Errorf("garbled key: %s, key %q", r.raw, k)
	}

	ticket := "/api/rooms/sale/embed/tickets/" + id
	for what, hdr := range map[string][]string{
		"the cookie": {"Cookie", cookie}, "the key header": {"X-Waitroom-Key", key},
	} {
		if r := e.do(nil, "GET", ticket, "", hdr...); r.status != 200 || r.body["ticket"] != id {
			t.Errorf("status by %s: %d %s", what, r.status, r.raw)
		}
	}
	if r := e.do(nil, "GET", ticket+"?key="+key, ""); r.status != 200 {
		t.Errorf("status by ?key: %d %s", r.status, r.raw)
	}
	for what, path := range map[string]string{
		"no identity":           ticket,
		"the key in a DELETE":   ticket + "?key=" + key,
		"another room's ticket": "/api/rooms/other/embed/tickets/" + id + "?key=" + key,
		"the top-level API":     "/api/rooms/sale/tickets/" + id + "?key=" + key,
	} {
		method := "GET"
		if strings.Contains(what, "DELETE") {
			method = "DELETE"
		}
		if r := e.do(nil, method, path, "", "Cookie", "wr_vid=0123456789abcdef0123456789abcdef"); r.status != 404 {
			t.Errorf("%s (%s %s): %d %s", what, method, path, r.status, r.raw)
		}
	}
	// The top-level page's visitor is not the embed's: its cookie finds no embed ticket, and the reverse.
	b := e.browser()
	top := e.do(b, "POST", "/api/rooms/sale/enter", "")
	topID := top.body["ticket"].(string)
	vid := b.Jar.Cookies(mustURL(e.url))[0]
	if r := e.do(nil, "GET", "/api/rooms/sale/embed/tickets/"+topID, "", "Cookie", vid.Name+"="+vid.Value); r.status != 404 {
		t.Errorf("embed API with the top-level cookie: %d", r.status)
	}
	if r := e.do(nil, "GET", "/api/rooms/sale/tickets/"+id, "", "Cookie", cookie); r.status != 404 {
		t.Errorf("top-level API with the embed cookie: %d", r.status)
	}

	// The push channels take the key from the query: they cannot send headers.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { _ = e.srv.Run(ctx) }()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+ticket+"/ws?key="+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := readTicket(t, ctx, ws); m["ticket"] != id || m["state"] != "waiting" {
		t.Errorf("first WebSocket message %v", m)
	}
	ws.CloseNow()

	// Leave with the key: the place is given up.
	if r := e.do(nil, "DELETE", ticket, "", "X-Waitroom-Key", key); r.status != 204 {
		t.Errorf("leave: %d %s", r.status, r.raw)
	}
	if r := e.do(nil, "GET", ticket, "", "X-Waitroom-Key", key); r.body["state"] != "expired" {
		t.Errorf("after leave: %s", r.raw)
	}
}

// TestEmbedUserTokenIsOnePlace: a user in a top-level tab (the API) and in
// an embed holds one place; the embed's user key reaches the push channels
// without the user token going into a URL.
func TestEmbedUserTokenIsOnePlace(t *testing.T) {
	e := newEnv(t)
	secret := "a-shop-secret-of-some-length"
	e.putRoom("sale", `{"paused": true, "user_secret": "`+secret+`", "allowed_embedders": ["`+shopOrigin+`"]}`)
	e.putRoom("other", `{"paused": true, "user_secret": "`+secret+`"}`)
	e.do(e.browser(), "POST", "/api/rooms/sale/enter", "") // someone ahead
	ut, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "user-42"}).SignedString([]byte(secret))

	tab := e.do(e.browser(), "POST", "/api/rooms/sale/enter", `{"user_token":"`+ut+`"}`)
	emb, key := e.embedEnter("sale", `{"user_token":"`+ut+`"}`)
	if emb.status != 200 || emb.body["ticket"] != tab.body["ticket"] || emb.body["position"] != 2.0 {
		t.Fatalf("tab %s, embed %s: want one place, second in line", tab.raw, emb.raw)
	}
	if r, _ := e.embedEnter("sale", "", "Authorization", "Bearer "+ut); r.body["ticket"] != tab.body["ticket"] {
		t.Errorf("embed enter by bearer: %s", r.raw)
	}
	if !strings.HasPrefix(key, "u.") || strings.Contains(key, ut) {
		t.Fatalf("user key %q", key)
	}
	for _, c := range (&http.Response{Header: emb.header}).Cookies() {
		t.Errorf("a user's embed set cookie %s: the user token is the identity, nothing is left behind", c.Name)
	}
	id := tab.body["ticket"].(string)
	if r := e.do(nil, "GET", "/api/rooms/sale/embed/tickets/"+id+"?key="+key, ""); r.status != 200 {
		t.Errorf("status by user key: %d %s", r.status, r.raw)
	}
	if r := e.do(nil, "GET", "/api/rooms/sale/embed/tickets/"+id, "", "Authorization", "Bearer "+ut); r.status != 200 {
		t.Errorf("status by user token: %d %s", r.status, r.raw)
	}
	tampered := key[:len(key)-2] + "AA"
	if strings.HasSuffix(key, "AA") {
		tampered = key[:len(key)-2] + "BB"
	}
	if r := e.do(nil, "GET", "/api/rooms/sale/embed/tickets/"+id+"?key="+tampered, ""); r.status != 404 {
		t.Errorf("status by a tampered key: %d", r.status)
	}
	// The key is bound to its room, even where the same user waits too.
	other := e.do(e.browser(), "POST", "/api/rooms/other/enter", `{"user_token":"`+ut+`"}`).body["ticket"].(string)
	if r := e.do(nil, "GET", "/api/rooms/other/embed/tickets/"+other+"?key="+key, ""); r.status != 404 {
		t.Errorf("sale's user key read a ticket in room other: %d", r.status)
	}
	// And it expires with the day.
	e.clock.Advance(25 * time.Hour)
	if r := e.do(nil, "GET", "/api/rooms/sale/embed/tickets/"+id+"?key="+key, ""); r.status != 404 {
		t.Errorf("status by an expired user key: %d %s", r.status, r.raw)
	}
	var st map[string]any
	if r := e.admin("GET", "/admin/api/rooms/sale/stats", ""); r.status == 200 {
		st = r.body
	}
	if st["entered_total"] != 2.0 {
		t.Errorf("stats %v: want 2 entered (someone ahead, and the user once)", st)
	}
}

func TestEmbedSDKHasAStableURL(t *testing.T) {
	e := newEnv(t)
	r := e.do(nil, "GET", "/static/waitroom-embed.js", "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") ||
		r.header.Get("Cache-Control") != "public, max-age=300" || r.header.Get("ETag") == "" ||
		r.header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(r.raw, "Waitroom") {
		t.Fatalf("SDK: %d %v", r.status, r.header)
	}
	hashed := e.do(nil, "GET", static.Path("waitroom-embed.js"), "")
	if hashed.raw != r.raw || hashed.header.Get("ETag") != r.header.Get("ETag") {
		t.Fatal("the stable URL serves something else than the build")
	}
	if again := e.do(nil, "GET", "/static/waitroom-embed.js", "", "If-None-Match", r.header.Get("ETag")); again.status != 304 {
		t.Fatalf("revalidation: %d", again.status)
	}
}
