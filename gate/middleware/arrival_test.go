package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// The middleware's first acceptance of a token is its visitor arriving at
// checkout: the slot outlives arrival_window_s. A token the middleware
// never saw is a no-show: its slot goes to the next in line, and the
// middleware refuses it from then on (it asks waitroom on a first sight).
func TestMiddlewareFirstAcceptanceIsAnArrival(t *testing.T) {
	f := newFixture(t, "net/http", func(s *queue.Settings) { s.ArrivalWindowS, s.AbandonAfterS = 60, 3600 }, nil)
	_, cameTok := f.admit(vid)
	_, goneTok := f.admit("fedcba9876543210fedcba9876543210")
	f.clock.Advance(time.Second) // past orderable_at
	if res := f.do(client(nil), "GET", "/checkout/x", "Accept: application/json", "Authorization: Bearer "+cameTok, owner); res.status != 200 {
		t.Fatalf("the visitor who came: %d %s", res.status, res.body)
	}
	f.clock.Advance(time.Minute)
	ctx := context.Background()
	s, err := f.line.Settings(ctx, room)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.line.Tick(ctx, room, &s)
	if err != nil || r.NoShows != 1 {
		t.Fatalf("tick: %+v %v", r, err)
	}
	for tok, want := range map[string]string{cameTok: "", goneTok: "no_show"} {
		v, err := f.line.Verify(ctx, tok, room)
		if err != nil || v.Reason != want {
			t.Errorf("ticket %s: %+v %v, want reason %q", v.Claims.TicketID, v, err, want)
		}
	}
	// The no-show presents its token now, at a server that never saw it.
	res := f.do(client(nil), "GET", "/checkout/x", "Accept: application/json", "Authorization: Bearer "+goneTok,
		"Cookie: wr_vid=fedcba9876543210fedcba9876543210")
	if res.status == http.StatusOK {
		t.Fatalf("a no-show's token passed: %s", res.body)
	}
}
