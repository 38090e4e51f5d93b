package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestClearedOrEarlierOpeningDrawsOpenPages: waiting pages (WebSockets) of
// a pre-queue hear their drawn places once the operator clears opens_at
// (PATCH {"opens_at": null}) or moves it earlier, then hear their admissions
// one a tick in the drawn order; a later arrival queues behind the draw.
func TestClearedOrEarlierOpeningDrawsOpenPages(t *testing.T) {
	for _, c := range []struct{ name, patch string }{
		{"cleared", `{"opens_at": null}`},
		{"moved earlier", ""}, // a minute from now, then the clock passes it
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			go func() { _ = e.srv.Run(ctx) }()
			opens := e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
			// Paused: the server's own admission loop (Run, on the fake
			// clock the test advances) must not admit anyone between the
			// test's own ticks, which unpause their copy of the settings.
			// The clock jumps a minute past the pages' last signs of life:
			// a long abandon_after_s keeps that loop from reaping them as
			// gone before their sockets say otherwise (it did under load).
			e.putRoom("sale", `{"opens_at": "`+opens+`", "batch_size": 1, "batch_interval_ms": 1000, "capacity": 100, "paused": true, "abandon_after_s": 3600}`)

			const n = 4
			type page struct {
				ws    *websocket.Conn
				place int64 // drawn
			}
			var pages []*page
			for i := range n {
				b := e.browser()
				r := e.do(b, "POST", "/api/rooms/sale/enter", "")
				id, _ := r.body["ticket"].(string)
				if r.status != 200 || r.body["state"] != "scheduled" {
					t.Fatalf("enter %d before the opening: %d %v", i, r.status, r.body)
				}
				hdr := http.Header{}
				for _, ck := range b.Jar.Cookies(mustURL(e.url)) {
					hdr.Add("Cookie", ck.Name+"="+ck.Value)
				}
				ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/api/rooms/sale/tickets/"+id+"/ws",
					&websocket.DialOptions{HTTPHeader: hdr})
				if err != nil {
					t.Fatal(err)
				}
				defer ws.CloseNow()
				if m := readTicket(t, ctx, ws); m["state"] != "scheduled" {
					t.Fatalf("page %d's first message: %v", i, m)
				}
				pages = append(pages, &page{ws: ws})
			}

			if c.patch != "" {
				if r := e.admin("PATCH", "/admin/api/rooms/sale", c.patch); r.status != 200 {
					t.Fatalf("clear opens_at: %d %s", r.status, r.raw)
				}
			} else {
				earlier := e.clock.Now().Add(time.Minute).UTC().Format(time.RFC3339)
				if r := e.admin("PATCH", "/admin/api/rooms/sale", `{"opens_at": "`+earlier+`"}`); r.status != 200 {
					t.Fatalf("move opens_at earlier: %d %s", r.status, r.raw)
				}
				e.clock.Advance(time.Minute + time.Second)
			}
			tick := func(due bool) {
				t.Helper()
				s, err := e.line.Settings(ctx, "sale")
				if err != nil {
					t.Fatal(err)
				}
				// A tick whose lease is not due yet keeps house and admits
				// nobody (queue.Admitter), as the first after a change may.
				s.Paused = !due
				e.clock.Advance(time.Duration(s.BatchIntervalMS) * time.Millisecond)
				if _, err := e.line.Tick(ctx, "sale", &s); err != nil {
					t.Fatal(err)
				}
			}
			tick(false) // the draw
			// Every page hears its drawn place.
			seen := map[int64]bool{}
			for i, p := range pages {
				for p.place == 0 {
					m := readTicket(t, ctx, p.ws)
					switch m["state"] {
					case "waiting":
						p.place = int64(m["position"].(float64))
					case "scheduled":
						continue
					default:
						t.Fatalf("page %d after the draw: %v", i, m)
					}
				}
				if seen[p.place] || p.place < 1 || p.place > n {
					t.Fatalf("page %d's drawn place %d: places so far %v", i, p.place, seen)
				}
				seen[p.place] = true
			}
			// A later arrival is behind the drawn pre-queue.
			late := e.do(e.browser(), "POST", "/api/rooms/sale/enter", "")
			if late.body["state"] != "waiting" || late.body["position"] != float64(n+1) {
				t.Fatalf("a later arrival: %v, want waiting at %d behind the draw", late.body, n+1)
			}
			// One admission a tick, in the drawn order, each heard on its page.
			for place := int64(1); place <= n; place++ {
				tick(true)
				var next *page
				for _, p := range pages {
					if p.place == place {
						next = p
					}
				}
				for {
					m := readTicket(t, ctx, next.ws)
					if m["state"] == "admitted" {
						break
					}
					if m["state"] != "waiting" {
						t.Fatalf("place %d: %v", place, m)
					}
				}
			}
			// The later arrival comes next.
			tick(true)
			if st, err := e.line.Stats(ctx, "sale", e.clock.Now()); err != nil || st.Waiting != 0 || st.AdmittedTotal != n+1 {
				t.Fatalf("after the drawn pre-queue and the later arrival: %+v %v", st, err)
			}
		})
	}
}
