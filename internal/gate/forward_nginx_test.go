package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/testkit/tooltest"
	"github.com/waitroom/waitroom/internal/visitor/pow"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

// startNginx runs a real nginx (Debian's) with deploy/nginx/waitroom.conf,
// its addresses pointed at waitroomAddr and checkoutAddr, listening on
// listenAddr. It returns once nginx takes connections.
func startNginx(t *testing.T, listenAddr, waitroomAddr, checkoutAddr string) {
	t.Helper()
	example, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nginx", "waitroom.conf"))
	if err != nil {
		t.Fatal(err)
	}
	site := string(example)
	for from, to := range map[string]string{
		"server 127.0.0.1:8080;": "server " + waitroomAddr + ";",
		"server 127.0.0.1:9000;": "server " + checkoutAddr + ";",
		"listen 80;":             "listen " + listenAddr + ";",
	} {
		if !strings.Contains(site, from) {
			t.Fatalf("deploy/nginx/waitroom.conf no longer has %q for the test to replace", from)
		}
		site = strings.Replace(site, from, to, 1)
	}
	tooltest.StartNginx(t, site, listenAddr)
}

// TestForwardAuthBehindNginx: a shop behind a real nginx protects its
// checkout with deploy/nginx/waitroom.conf alone. A flash crowd of API
// clients never puts more than capacity orders in flight at the checkout
// and is admitted in the order it entered; a browser goes to the waiting
// page and comes back with its token; forged, spent, copied and spoofed
// credentials get nowhere.
func TestForwardAuthBehindNginx(t *testing.T) {
	const (
		room     = "demo" // as in the example
		visitors = 300
		capacity = 10
		parallel = 32
	)
	listen := tooltest.FreeAddr(t)
	public := "http://" + listen

	rdb := redis.NewClient(&redis.Options{Addr: redistest.Shared(t).Addr(), PoolSize: 2 * parallel})
	t.Cleanup(func() { _ = rdb.Close() })
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys.Issuer = public
	line := queue.NewLine(redisstore.New(rdb, redistest.Prefix(t)), keys, queue.LineOptions{})
	s := queue.DefaultSettings()
	s.TargetURL = "/checkout/"
	s.Capacity, s.BatchSize, s.BatchIntervalMS, s.JitterMS = capacity, 10, 50, 50
	s.AbandonAfterS = 120
	s.Tiers = []queue.Tier{{MaxPosition: ptr[int64](50), IntervalMS: 100}, {IntervalMS: 500}}
	s.Paused = true // until the crowd is in line
	s.BotProtection.ProofOfWork = queue.ProofOfWorkOff
	ctx := context.Background()
	if err := line.PutRoom(ctx, room, s); err != nil {
		t.Fatal(err)
	}
	wr := httptest.NewServer(server.New(line, server.Config{AdminToken: "test-admin-token-0123456789"}))
	t.Cleanup(wr.Close)
	up := &slowUpstream{delay: 20 * time.Millisecond}
	shop := httptest.NewServer(up)
	t.Cleanup(shop.Close)
	startNginx(t, listen, strings.TrimPrefix(wr.URL, "http://"), strings.TrimPrefix(shop.URL, "http://"))

	admitted := runAdmitter(t, line)

	crowdCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	transport := &http.Transport{MaxIdleConnsPerHost: parallel, MaxConnsPerHost: parallel}
	t.Cleanup(transport.CloseIdleConnections)
	slots := make(chan struct{}, parallel)
	crowd := make([]*crowdVisitor, visitors)
	errs := make(chan error, visitors)
	var wg, inLine sync.WaitGroup
	var completed atomic.Int64
	inLine.Add(visitors)
	for i := range crowd {
		jar, _ := cookiejar.New(nil)
		v := &crowdVisitor{id: fmt.Sprint(i), client: &http.Client{Jar: jar, Transport: transport, Timeout: 10 * time.Second},
			tickets: map[string]bool{}}
		crowd[i] = v
		wg.Add(1)
		go func() {
			defer wg.Done()
			once := sync.OnceFunc(inLine.Done)
			defer once()
			if err := v.run(crowdCtx, public+"/checkout/order", slots, once); err != nil {
				errs <- err
				return
			}
			// Done with checkout: hand the slot back, as the shop would.
			tok := tokenCookie(jar, public)
			if tok == "" {
				errs <- fmt.Errorf("visitor %s passed without a wr_token cookie", v.id)
				return
			}
			res, err := v.client.Post(public+"/api/rooms/"+room+"/complete", "application/json", strings.NewReader(`{"token":"`+tok+`"}`))
			if err != nil {
				errs <- err
				return
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("visitor %s: complete: %d", v.id, res.StatusCode)
				return
			}
			completed.Add(1)
		}()
	}
	inLine.Wait()
	opened := time.Now()
	s.Paused = false
	if err := line.PutRoom(ctx, room, s); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	through := time.Since(opened)
	close(errs)
	failed := 0
	for err := range errs {
		if failed++; failed <= 5 {
			t.Error(err)
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d visitors did not get through", failed, visitors)
	}

	up.mu.Lock()
	arrivals := append([]arrival(nil), up.arrivals...)
	up.mu.Unlock()
	if len(arrivals) != visitors {
		t.Fatalf("checkout saw %d orders, want %d", len(arrivals), visitors)
	}
	seen := map[string]bool{}
	for _, a := range arrivals {
		if seen[a.visitor] {
			t.Errorf("visitor %s reached checkout twice", a.visitor)
		}
		seen[a.visitor] = true
		if a.ticket == "" {
			t.Errorf("visitor %s reached checkout without the verified Waitroom-Ticket header", a.visitor)
		}
	}
	if p := up.peak.Load(); p > capacity || p == 0 {
		t.Errorf("checkout worked on %d orders at once, capacity is %d", p, capacity)
	}
	order := admitted()
	if len(order) != visitors {
		t.Fatalf("the admission loop admitted %d, want %d", len(order), visitors)
	}
	tickets, _, err := line.StatusMany(ctx, room, order)
	if err != nil {
		t.Fatal(err)
	}
	for i, tk := range tickets {
		if tk.Seq != int64(i+1) {
			t.Fatalf("admission %d was ticket %s with entry seq %d, want %d (first come, first served)", i+1, tk.ID, tk.Seq, i+1)
		}
	}
	t.Logf("%d visitors through nginx auth_request in %v after the sale opened; checkout peak %d in flight (capacity %d)",
		visitors, through.Round(time.Millisecond), up.peak.Load(), capacity)

	// The attackers, now that the line is empty and the turn starts at once.
	s.JitterMS = 0
	if err := line.PutRoom(ctx, room, s); err != nil {
		t.Fatal(err)
	}
	before := len(arrivals)
	arrivalsNow := func() []arrival {
		up.mu.Lock()
		defer up.mu.Unlock()
		return append([]arrival(nil), up.arrivals...)
	}
	noFollow := func(jar http.CookieJar) *http.Client {
		return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	get := func(c *http.Client, path string, hdr ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", public+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}

	// A browser: to the waiting page, back with its token, through.
	jar, _ := cookiejar.New(nil)
	b := noFollow(jar)
	res := get(b, "/checkout/cart?size=42", "Accept", "text/html")
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != public+"/rooms/"+room {
		t.Fatalf("browser without a token: %d to %q, want 302 to the waiting page", res.StatusCode, res.Header.Get("Location"))
	}
	page := get(b, "/rooms/"+room, "Accept", "text/html") // the waiting page enters it
	if page.StatusCode != http.StatusOK {
		t.Fatalf("waiting page: %d", page.StatusCode)
	}
	enter, err := b.Post(public+"/api/rooms/"+room+"/enter", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var tk struct{ Token, RedirectURL string }
	if err := decodeJSON(enter, &tk); err != nil || tk.Token == "" {
		t.Fatalf("enter: %v %+v", err, tk)
	}
	land := get(b, "/checkout/?wr_token="+tk.Token, "Accept", "text/html")
	// nginx makes the gate's relative Location absolute (absolute_redirect).
	if loc := strings.TrimPrefix(land.Header.Get("Location"), public); land.StatusCode != http.StatusFound || loc != "/checkout/cart?size=42" {
		t.Fatalf("landing: %d to %q, want 302 back to /checkout/cart?size=42", land.StatusCode, land.Header.Get("Location"))
	}
	if got := get(b, "/checkout/cart?size=42", "Accept", "text/html", "Waitroom-Ticket", "forged"); got.StatusCode != http.StatusCreated {
		t.Fatalf("browser with its token: %d, want the checkout's 201", got.StatusCode)
	}
	if a := arrivalsNow(); len(a) != before+1 || a[len(a)-1].ticket == "forged" || a[len(a)-1].ticket == "" {
		t.Fatalf("the checkout saw %+v: want one more order under the verified ticket, not the client's header", a[before:])
	}

	// A token signed by anyone else, and a spent one, are refused; the
	// API client is put in line instead (paused, so it waits there) and
	// the checkout sees nothing.
	s.Paused = true
	if err := line.PutRoom(ctx, room, s); err != nil {
		t.Fatal(err)
	}
	other, _ := token.Generate()
	forged, err := other.Sign(token.EntryClaims{Issuer: public, Room: room, Subject: "x", TicketID: "t", NotBefore: time.Now(), ExpiresAt: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	spent := tokenCookie(crowd[0].client.Jar, public)
	for name, tok := range map[string]string{"forged": forged, "spent": spent} {
		res := get(noFollow(nil), "/checkout/order", "Accept", "application/json", "Authorization", "Bearer "+tok)
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
			t.Errorf("%s token: %d (Retry-After %q), want 429 with Retry-After", name, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	if a := arrivalsNow(); len(a) != before+1 {
		t.Errorf("the checkout saw %d more orders, want none from forged or spent tokens", len(a)-before-1)
	}

	// A copied live token: the browser's, sent by another client as its
	// cookie or as Bearer, is refused with 403 token_other_holder (and no
	// place: issue 22), while the browser that holds it still passes.
	for name, hdr := range map[string][]string{
		"cookie": {"Cookie", "wr_token=" + tk.Token},
		"bearer": {"Authorization", "Bearer " + tk.Token},
	} {
		res := get(noFollow(nil), "/checkout/order", append([]string{"Accept", "application/json"}, hdr...)...)
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("copied token as %s: %d, want 403", name, res.StatusCode)
		}
	}
	if a := arrivalsNow(); len(a) != before+1 {
		t.Errorf("the checkout saw %d more orders, want none from a copied token", len(a)-before-1)
	}
	if got := get(b, "/checkout/order", "Accept", "application/json"); got.StatusCode != http.StatusCreated {
		t.Errorf("the token's owner after the copies: %d, want the checkout's 201", got.StatusCode)
	}
	if a := arrivalsNow(); len(a) != before+2 || a[len(a)-1].ticket == "" {
		t.Errorf("the checkout saw %d more orders, want the owner's one under its verified ticket", len(a)-before-1)
	}
	before++

	// With proof of work on, an API client without a place gets the
	// challenge through nginx and no place; its solution in X-Waitroom-Pow
	// reaches waitroom through the subrequest and buys the place (in line:
	// the room is paused).
	s.BotProtection.ProofOfWork, s.BotProtection.PowCost = queue.ProofOfWorkOn, 4
	if err := line.PutRoom(ctx, room, s); err != nil {
		t.Fatal(err)
	}
	powJar, _ := cookiejar.New(nil)
	solver := noFollow(powJar)
	ask := func(hdr ...string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", public+"/checkout/order", nil)
		req.Header.Set("Accept", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := solver.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			t.Fatalf("status %d: %v", res.StatusCode, err)
		}
		return res.StatusCode, body
	}
	placesBefore, err := line.Stats(ctx, room, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	status, body := ask()
	if e, _ := body["error"].(map[string]any); status != http.StatusForbidden || e["code"] != "challenge_required" || body["challenge"] == nil {
		t.Fatalf("API client with proof of work on: %d %v, want 403 challenge_required with a challenge", status, body)
	}
	raw, _ := json.Marshal(body["challenge"])
	var ch pow.Challenge
	if err := json.Unmarshal(raw, &ch); err != nil {
		t.Fatal(err)
	}
	solved, err := pow.Solve(ctx, ch, 1)
	if err != nil {
		t.Fatal(err)
	}
	if status, body := ask("X-Waitroom-Pow", "not a payload"); status != http.StatusBadRequest || body["challenge"] == nil {
		t.Errorf("a malformed solution through nginx: %d %v, want 400 with a fresh challenge", status, body)
	}
	if places, err := line.Stats(ctx, room, time.Now()); err != nil || places.EnteredTotal != placesBefore.EnteredTotal {
		t.Fatalf("without a solution: %d places taken (%v), want none", places.EnteredTotal-placesBefore.EnteredTotal, err)
	}
	if status, body := ask("X-Waitroom-Pow", solved.Encode()); status != http.StatusTooManyRequests || body["ticket"] == nil {
		t.Fatalf("with the solution through nginx: %d %v, want 429 in line with its ticket", status, body)
	}
	if places, err := line.Stats(ctx, room, time.Now()); err != nil || places.EnteredTotal != placesBefore.EnteredTotal+1 {
		t.Errorf("with the solution: %d places taken (%v), want 1", places.EnteredTotal-placesBefore.EnteredTotal, err)
	}

	// Waitroom gone: nginx fails closed with a 503 the client can retry.
	wr.Close()
	if res := get(noFollow(nil), "/checkout/order", "Accept", "application/json"); res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("waitroom down: %d (Retry-After %q), want 503 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if a := arrivalsNow(); len(a) != before+1 {
		t.Errorf("with waitroom down the checkout saw %d more orders, want none", len(a)-before-1)
	}
}

func tokenCookie(jar http.CookieJar, public string) string {
	u, _ := url.Parse(public + "/checkout/")
	for _, c := range jar.Cookies(u) {
		if c.Name == "wr_token" {
			return c.Value
		}
	}
	return ""
}

func decodeJSON(res *http.Response, v any) error {
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	return json.NewDecoder(res.Body).Decode(v)
}
