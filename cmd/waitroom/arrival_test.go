package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestSlotsLapseUnused runs the built binary in gate mode on a real
// redis-server with a room of one slot, arrival_window_s 2 and
// idle_after_s 2: a visitor admitted who never comes loses the slot to the
// next in line and its token stops verifying (no_show), and the gate sends
// its browser to a waiting page that says so; a visitor who passes the gate
// and keeps making requests keeps the slot past the window; when it stops,
// the slot goes to the next (idle). Both show in the metrics.
func TestSlotsLapseUnused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	bin := buildBinary(t)
	var upstream atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstream.Add(1)
		_, _ = io.WriteString(w, "checkout "+r.URL.Path)
	}))
	t.Cleanup(up.Close)
	rs := redistest.Start(t)
	broker := kafkatest.Start(t, outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic)
	dataDir := t.TempDir()
	const token = "arrival-test-admin-token-0123456789"
	if out, err := exec.Command(bin, "--create-signing-key", "--data-dir", dataDir).CombinedOutput(); err != nil {
		t.Fatalf("create signing key: %v\n%s", err, out)
	}
	p := startBinary(t, bin, "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--redis-url", rs.URL(), "--admin-token", token,
		"--kafka-brokers", broker.Addrs()[0], "--embed-demo-addr", "off", "--log-format", "json",
		"--upstream", up.URL, "--protect", "/checkout/*", "--gate-room", "sale")
	defer p.stop(t)
	base := "http://" + p.addr
	admin := http.DefaultClient

	// Bad values are refused with the field named.
	for _, field := range []string{"arrival_window_s", "idle_after_s"} {
		r := call(t, admin, "PUT", base+"/admin/api/rooms/sale", token, `{"`+field+`": -1}`)
		e, _ := r.body["error"].(map[string]any)
		if r.status != http.StatusBadRequest || e["field"] != field {
			t.Errorf("%s -1: %d %v, want 400 naming the field", field, r.status, r.body)
		}
	}
	if r := call(t, admin, "PUT", base+"/admin/api/rooms/sale", token, `{"capacity": 1, "jitter_ms": 0, "abandon_after_s": 120,
		"arrival_window_s": 2, "idle_after_s": 2, "bot_protection": {"proof_of_work": "off"}}`); r.status != 201 {
		t.Fatalf("create room: %d %v", r.status, r.body)
	}
	visitor := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	enter := func(c *http.Client) answer {
		t.Helper()
		r := call(t, c, "POST", base+"/api/rooms/sale/enter", "", "")
		if r.status != 200 {
			t.Fatalf("enter: %d %v", r.status, r.body)
		}
		return r
	}
	status := func(c *http.Client, ticket string) answer {
		t.Helper()
		return call(t, c, "GET", base+"/api/rooms/sale/tickets/"+ticket, "", "")
	}
	verify := func(tok string) answer {
		t.Helper()
		return call(t, admin, "POST", base+"/api/tokens/verify", "", `{"token": "`+tok+`", "room": "sale"}`)
	}
	// gate is a request through the gate as an API client with its token.
	gate := func(c *http.Client, tok string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/checkout/pay", nil)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}

	// A is admitted and never comes; B waits.
	a, b, c := visitor(), visitor(), visitor()
	ra := enter(a)
	aAdmitted := time.Now()
	aTok, _ := ra.body["token"].(string)
	if ra.body["state"] != "admitted" || aTok == "" {
		t.Fatalf("A into an empty room: %v", ra.body)
	}
	rb := enter(b)
	bTicket, _ := rb.body["ticket"].(string)
	if rb.body["state"] != "waiting" {
		t.Fatalf("B over capacity: %v", rb.body)
	}
	var bTok string
	testkit.Until(t, 15*time.Second, "B admitted after A's arrival window", func() bool {
		r := status(b, bTicket)
		bTok, _ = r.body["token"].(string)
		return r.body["state"] == "admitted"
	})
	if waited := time.Since(aAdmitted); waited < 1900*time.Millisecond {
		t.Fatalf("A's slot went after %v, within its 2 s window", waited)
	}
	if r := verify(aTok); r.body["valid"] != false || r.body["reason"] != "no_show" {
		t.Fatalf("a no-show's token: %v", r.body)
	}
	// A's browser comes late through the gate: sent to a waiting page that says why.
	before := upstream.Load()
	req, _ := http.NewRequest("GET", base+"/checkout/pay", nil)
	req.Header.Set("Accept", "text/html")
	req.AddCookie(&http.Cookie{Name: "wr_token", Value: aTok})
	res, err := a.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || loc == nil || loc.Query().Get("lapsed") != "no_show" {
		t.Fatalf("a no-show's browser at the gate: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	page, err := a.Get(base + loc.RequestURI())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != 200 || !strings.Contains(string(body), "Your turn has lapsed") || !strings.Contains(string(body), "again=1") {
		t.Fatalf("the lapsed page: %d %.300s", page.StatusCode, body)
	}
	if upstream.Load() != before {
		t.Fatal("a no-show's token reached checkout")
	}

	// B comes through the gate and keeps coming, past its window: C waits.
	rc := enter(c)
	cTicket, _ := rc.body["ticket"].(string)
	var bLast time.Time
	for i := range 10 {
		if code := gate(b, bTok); code != 200 {
			t.Fatalf("B through the gate (request %d): %d", i, code)
		}
		bLast = time.Now()
		time.Sleep(400 * time.Millisecond) // B's pace of requests, not a wait for a signal
	}
	if r := status(c, cTicket); r.body["state"] != "waiting" {
		t.Fatalf("C while B is busy at checkout: %v", r.body)
	}
	// B stops: the slot goes to C within idle_after_s and a quarter, plus a tick.
	testkit.Until(t, 15*time.Second, "C admitted after B went idle", func() bool {
		return status(c, cTicket).body["state"] == "admitted"
	})
	if quiet := time.Since(bLast); quiet < 1900*time.Millisecond {
		t.Fatalf("B's slot went after %v of quiet, within idle_after_s 2 s", quiet)
	}
	if r := verify(bTok); r.body["valid"] != false || r.body["reason"] != "idle" {
		t.Fatalf("an idle visitor's token: %v", r.body)
	}
	if code := gate(b, bTok); code == 200 {
		t.Fatal("an idle visitor's token passed the gate")
	}

	mres, err := admin.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(mres.Body)
	mres.Body.Close()
	for _, want := range []string{`waitroom_room_slots_lapsed_total{reason="no_show",room="sale"} 1`,
		`waitroom_room_slots_lapsed_total{reason="idle",room="sale"} 1`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
