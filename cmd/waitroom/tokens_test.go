package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// from is a client whose connections come from ip (127.0.0.0/8 are all this
// machine's: distinct client addresses to the server), with a cookie jar
// when jar is set, never following redirects.
func from(ip string, jar bool) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c := &http.Client{
		Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
		Timeout:   10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	if jar {
		c.Jar, _ = cookiejar.New(nil)
	}
	return c
}

type reply struct {
	status int
	header http.Header
	body   string
	json   map[string]any
}

func (r reply) code() string {
	e, _ := r.json["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func send(t *testing.T, c *http.Client, method, target, body string, hdr ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	out := reply{status: res.StatusCode, header: res.Header, body: string(b)}
	_ = json.Unmarshal(b, &out.json)
	return out
}

var goLink = regexp.MustCompile(`data-testid="go-link"\s+href="([^"]+)"`)

// TestCopiedTokensPassForNobodyButTheirOwners (issue 22) runs the built
// binary as a gate (--upstream) on a real redis-server, in a room without
// proof of work and with free slots, so that nothing but the token could
// hold a stranger back. Owners enter through the API, the waiting page and
// the embed, and reach the upstream checkout. Strangers from other
// addresses then send each owner's token as Bearer, as the token cookie and
// through a ?wr_token= landing, with no visitor cookie, with a fresh
// waitroom cookie of their own and with a made-up one: every one is
// refused (403 token_other_holder, or the waiting page for a browser), takes
// no place, and the upstream never sees them. The owners still pass. An
// anonymous holder binding is refused; an owner whose token a thief
// presented first (and a shop bound to the thief) takes it back with the
// waiting page's hand-off code.
func TestCopiedTokensPassForNobodyButTheirOwners(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	bin := buildBinary(t)
	rs := redistest.Start(t)
	var strangersSeen, ownersSeen atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Who") == "stranger" {
			strangersSeen.Add(1)
		} else {
			ownersSeen.Add(1)
		}
		fmt.Fprintf(w, "checkout for %s", r.Header.Get("Waitroom-Ticket"))
	}))
	t.Cleanup(up.Close)
	dataDir := t.TempDir()
	const admin = "tokens-test-admin-token-0123456789abcdef"
	if out, err := exec.Command(bin, "--create-signing-key", "--data-dir", dataDir).CombinedOutput(); err != nil {
		t.Fatalf("create signing key: %v\n%s", err, out)
	}
	p := startBinary(t, bin, "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--redis-url", rs.URL(), "--admin-token", admin,
		"--kafka-brokers", "embedded", "--embed-demo-addr", "off", "--log-format", "json",
		"--upstream", up.URL, "--protect", "/checkout/*", "--gate-room", "sale")
	base := "http://" + p.addr
	op := from("127.0.0.1", false)
	for _, room := range []string{"sale", "other"} {
		if r := send(t, op, "PUT", base+"/admin/api/rooms/"+room, `{"bot_protection": {"proof_of_work": "off"}, "jitter_ms": 0, "target_url": "/checkout/"}`,
			"Authorization", "Bearer "+admin); r.status != 201 {
			t.Fatalf("create %s: %d %s", room, r.status, r.body)
		}
	}

	type owner struct {
		name, token, ticket string
		c                   *http.Client
	}
	// land follows a redirect_url (a hand-off code) on the gate, then asks
	// for checkout as the browser does.
	land := func(c *http.Client, redirect string) reply {
		t.Helper()
		if !strings.Contains(redirect, "wr_code=h.") || strings.Contains(redirect, "wr_token") {
			t.Fatalf("redirect %q: want a hand-off code and no token", redirect)
		}
		if r := send(t, c, "GET", base+redirect, "", "Accept", "text/html"); r.status != http.StatusFound || r.header.Get("Location") != "/checkout/" {
			t.Fatalf("landing: %d to %q", r.status, r.header.Get("Location"))
		}
		return send(t, c, "GET", base+"/checkout/", "", "Accept", "text/html")
	}
	var owners []owner

	// The API: the visitor's cookie is its own, the token comes in the answer.
	api := from("127.0.0.2", true)
	r := send(t, api, "POST", base+"/api/rooms/sale/enter", "")
	if r.json["state"] != "admitted" || r.json["token"] == nil {
		t.Fatalf("API enter: %d %s", r.status, r.body)
	}
	owners = append(owners, owner{"api", r.json["token"].(string), r.json["ticket"].(string), api})
	if r := send(t, api, "GET", base+"/checkout/cart", "", "Accept", "application/json", "Authorization", "Bearer "+owners[0].token); r.status != 200 ||
		r.body != "checkout for "+owners[0].ticket {
		t.Fatalf("the API owner: %d %s", r.status, r.body)
	}

	// The waiting page: its go link carries a code, never the token.
	page := from("127.0.0.3", true)
	r = send(t, page, "GET", base+"/rooms/sale", "", "Accept", "text/html")
	m := goLink.FindStringSubmatch(r.body)
	if r.status != 200 || m == nil {
		t.Fatalf("waiting page: %d, go link %v", r.status, m)
	}
	if r := land(page, html.UnescapeString(m[1])); r.status != 200 {
		t.Fatalf("the page's owner at checkout: %d %s", r.status, r.body)
	}
	r = send(t, page, "POST", base+"/api/rooms/sale/enter", "")
	owners = append(owners, owner{"page", r.json["token"].(string), r.json["ticket"].(string), page})

	// The embed: an anonymous embed visitor, whose host page sends the top
	// window to redirect_url.
	embed := from("127.0.0.4", true)
	r = send(t, embed, "POST", base+"/api/rooms/sale/embed/enter", "")
	if r.json["state"] != "admitted" {
		t.Fatalf("embed enter: %d %s", r.status, r.body)
	}
	emb := owner{"embed", r.json["token"].(string), r.json["ticket"].(string), embed}
	if r := land(embed, r.json["redirect_url"].(string)); r.status != 200 || r.body != "checkout for "+emb.ticket {
		t.Fatalf("the embed's owner at checkout: %d %s", r.status, r.body)
	}
	owners = append(owners, emb)
	ownersBefore := ownersSeen.Load()

	// The strangers: one address each.
	n := 0
	stranger := func(identity string) (*http.Client, []string) {
		n++
		c := from(fmt.Sprintf("127.0.1.%d", n), identity == "fresh")
		switch identity {
		case "fresh": // a visitor cookie waitroom itself issued, for another room
			if r := send(t, c, "POST", base+"/api/rooms/other/enter", ""); r.status != 200 {
				t.Fatalf("a stranger's own place: %d %s", r.status, r.body)
			}
			return c, nil
		case "made-up":
			return c, []string{"wr_vid=0123456789abcdef0123456789abcdef"}
		}
		return c, nil
	}
	cookieHeader := func(parts ...string) []string {
		var kept []string
		for _, p := range parts {
			if p != "" {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 {
			return nil
		}
		return []string{"Cookie", strings.Join(kept, "; ")}
	}
	for _, o := range owners {
		for _, identity := range []string{"none", "fresh", "made-up"} {
			for _, how := range []string{"bearer", "cookie", "query"} {
				what := o.name + "'s token as " + how + ", " + identity + " cookie"
				c, ck := stranger(identity)
				vid := strings.Join(ck, "")
				hdr := []string{"Accept", "application/json", "X-Who", "stranger"}
				switch how {
				case "bearer":
					hdr = append(hdr, "Authorization", "Bearer "+o.token)
					hdr = append(hdr, cookieHeader(vid)...)
				case "cookie":
					hdr = append(hdr, cookieHeader(vid, "wr_token="+o.token)...)
				case "query":
					l := send(t, c, "GET", base+"/checkout/x?wr_token="+o.token, "", append([]string{"Accept", "text/html", "X-Who", "stranger"}, cookieHeader(vid)...)...)
					if l.status != http.StatusFound {
						t.Fatalf("%s: landing %d", what, l.status)
					}
					set := []string{vid}
					for _, line := range l.header.Values("Set-Cookie") {
						kv, _, _ := strings.Cut(line, ";")
						if strings.HasPrefix(kv, "wr_token=") || (identity != "made-up" && strings.HasPrefix(kv, "wr_vid=")) {
							set = append(set, kv)
						}
					}
					hdr = append(hdr, cookieHeader(set...)...)
				}
				r := send(t, c, "GET", base+"/checkout/x", "", hdr...)
				if r.status == 200 || r.status != http.StatusForbidden || r.code() != "token_other_holder" || r.json["ticket"] != nil {
					t.Errorf("%s: %d %.200s, want 403 token_other_holder and no place", what, r.status, r.body)
				}
				b := send(t, c, "GET", base+"/checkout/x", "", append([]string{"Accept", "text/html", "X-Who", "stranger"}, hdr[4:]...)...)
				if b.status != http.StatusFound || !strings.HasSuffix(b.header.Get("Location"), "/rooms/sale") {
					t.Errorf("%s, as a browser: %d to %q, want the waiting page", what, b.status, b.header.Get("Location"))
				}
			}
		}
	}
	if n := strangersSeen.Load(); n != 0 {
		t.Errorf("the upstream served %d strangers' requests", n)
	}
	// The owners pass as before.
	for _, o := range owners {
		if r := send(t, o.c, "GET", base+"/checkout/again", "", "Accept", "application/json", "Authorization", "Bearer "+o.token); r.status != 200 ||
			r.body != "checkout for "+o.ticket {
			t.Errorf("%s's owner after the strangers: %d %s", o.name, r.status, r.body)
		}
	}
	if got := ownersSeen.Load() - ownersBefore; got != int64(len(owners)) {
		t.Errorf("the upstream served %d owners' requests, want %d", got, len(owners))
	}

	// Binding a token to a holder is the shop's alone.
	anon := from("127.0.2.1", false)
	bind := `{"token": "` + owners[0].token + `", "room": "sale", "holder": "v:thief"}`
	if r := send(t, anon, "POST", base+"/api/tokens/verify", bind); r.status != 401 || r.code() != "holder_unauthenticated" {
		t.Errorf("an anonymous holder binding: %d %s, want 401 holder_unauthenticated", r.status, r.body)
	}
	if r := send(t, anon, "POST", base+"/api/tokens/verify", bind, "Authorization", "Bearer wrs_made-up"); r.status != 403 || r.code() != "holder_forbidden" {
		t.Errorf("a made-up shop key: %d %s, want 403 holder_forbidden", r.status, r.body)
	}

	// A thief presents an embed visitor's token before its owner: at the
	// gate it binds nothing; at a shop's server (the shop key) it holds it
	// first. The owner's waiting page hands out a fresh code, which takes the
	// token back everywhere.
	victim := from("127.0.0.5", true)
	r = send(t, victim, "POST", base+"/api/rooms/sale/embed/enter", "")
	vtok, vticket, vkey := r.json["token"].(string), r.json["ticket"].(string), r.header.Get("X-Waitroom-Key")
	thief := from("127.0.3.1", true)
	if r := send(t, thief, "GET", base+"/checkout/", "", "Accept", "application/json", "X-Who", "stranger", "Authorization", "Bearer "+vtok); r.status != 403 {
		t.Errorf("the thief first at the gate: %d %s, want 403", r.status, r.body)
	}
	key := send(t, op, "GET", base+"/admin/api/rooms/sale/shop-key", "", "Authorization", "Bearer "+admin)
	shopKey, _ := key.json["shop_key"].(string)
	thiefAtShop := `{"token": "` + vtok + `", "room": "sale", "holder": "v:thief-at-the-shop"}`
	if r := send(t, op, "POST", base+"/api/tokens/verify", thiefAtShop, "Authorization", "Bearer "+shopKey); r.json["valid"] != true {
		t.Fatalf("the thief, first at the shop: %d %s", r.status, r.body)
	}
	// The owner comes back through the waiting page (the embed asks again
	// with its key), which hands out a fresh code that takes the token back.
	r = send(t, victim, "POST", base+"/api/rooms/sale/embed/enter", "", "X-Waitroom-Key", vkey)
	if r.json["ticket"] != vticket {
		t.Fatalf("the owner's ticket again: %s", r.body)
	}
	ownersLink := r.json["redirect_url"].(string)
	if r := land(victim, ownersLink); r.status != 200 || r.body != "checkout for "+vticket {
		t.Fatalf("the owner after the thief: %d %s", r.status, r.body)
	}
	// The owner's link, read afterwards from a log or a Referer, is spent.
	if r := send(t, thief, "GET", base+ownersLink, "", "Accept", "text/html"); r.status != http.StatusFound {
		t.Fatalf("the thief's landing with the spent link: %d", r.status)
	}
	if r := send(t, thief, "GET", base+"/checkout/", "", "Accept", "text/html", "X-Who", "stranger"); r.status != http.StatusFound {
		t.Errorf("the thief after landing with the spent link: %d %s, want the waiting page", r.status, r.body)
	}
	if r := send(t, thief, "GET", base+"/checkout/", "", "Accept", "application/json", "X-Who", "stranger", "Authorization", "Bearer "+vtok); r.status != 403 {
		t.Errorf("the thief's copy after the owner's hand-off: %d %s, want 403", r.status, r.body)
	}
	if r := send(t, op, "POST", base+"/api/tokens/verify", thiefAtShop, "Authorization", "Bearer "+shopKey); r.json["valid"] != false || r.json["reason"] != "other_holder" {
		t.Errorf("the thief's binding at the shop after the owner's hand-off: %d %s", r.status, r.body)
	}
	if n := strangersSeen.Load(); n != 0 {
		t.Errorf("the upstream served %d strangers' requests", n)
	}
}
