package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// testPricedPlaces: with proof of work on, every paid place counts for its
// network; a solution that paid less than the network's next place costs
// is refused (ErrUnderpaid), and the count falls again when places end, in
// the pre-queue as in the line.
func testPricedPlaces(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	ctx := context.Background()
	open := time.Now().Add(time.Hour)
	for _, room := range []string{"line", "prequeue"} {
		t.Run(room, func(t *testing.T) {
			s := f.room(t, room, func(s *queue.Settings) {
				s.Paused = true
				if room == "prequeue" {
					s.OpensAt = &open
				}
			})
			bp := s.BotProtection
			held := func() int64 {
				t.Helper()
				n, err := f.line.PlacesHeld(ctx, room, "10.0.0.9")
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			var tickets []queue.Ticket
			for k := range int64(queue.PowFreePlaces + 2) {
				if n := held(); n != k {
					t.Fatalf("place %d: the network holds %d, want %d", k, n, k)
				}
				who := fmt.Sprintf("v:%s-%d", room, k)
				price := queue.PowPrice(bp, k)
				if k > 0 {
					// The price of a place before this one no longer buys one.
					if err := f.line.LimitClientPaid(ctx, room, &s, "10.0.0.9", who, queue.PowPrice(bp, k-1)); k >= queue.PowFreePlaces && !errors.Is(err, queue.ErrUnderpaid) {
						t.Fatalf("place %d paid at the price of %d: %v, want underpaid", k, k-1, err)
					}
				}
				if err := f.line.LimitClientPaid(ctx, room, &s, "10.0.0.9", who, price); err != nil {
					t.Fatalf("place %d at its price %d: %v", k, price, err)
				}
				tickets = append(tickets, f.enter(t, room, who))
			}
			if want := vocab.StateScheduled; room == "prequeue" && tickets[0].State != want {
				t.Fatalf("state %s, want %s", tickets[0].State, want)
			}
			// Another network pays the base price.
			if n, err := f.line.PlacesHeld(ctx, room, "10.0.0.10"); err != nil || n != 0 {
				t.Fatalf("another network holds %d %v", n, err)
			}
			// Places that end stop counting once rechecked (at most
			// PlacesSweep a call).
			for _, tk := range tickets[:3] {
				if err := f.line.Leave(ctx, room, tk.ID, tk.Identity); err != nil {
					t.Fatal(err)
				}
			}
			if n := held(); n != int64(len(tickets)-3) {
				t.Fatalf("after 3 left: holds %d, want %d", n, len(tickets)-3)
			}
			// A claim that never became a place lapses after its window.
			if err := f.line.LimitClientPaid(ctx, room, &s, "10.0.0.9", "v:"+room+"-never", queue.PowPrice(bp, held())); err != nil {
				t.Fatal(err)
			}
			if n := held(); n != int64(len(tickets)-2) {
				t.Fatalf("with a pending claim: holds %d, want %d", n, len(tickets)-2)
			}
			f.clock.Advance(queue.PlaceClaimWindow + time.Second)
			if n := held(); n != int64(len(tickets)-3) {
				t.Fatalf("after the claim lapsed: holds %d, want %d", n, len(tickets)-3)
			}
		})
	}
}

// testNoShowsKeepPricingTheirNetwork: a place that lapsed as a no-show
// counts for its network's price until its session would have ended, so a
// squatter cannot buy its places back at once at a lower price; a
// completed place stops counting at once.
func testNoShowsKeepPricingTheirNetwork(t *testing.T, target Open) {
	f := newFixture(t, target, noJitter)
	ctx := context.Background()
	s := f.room(t, "sale", func(s *queue.Settings) { s.Capacity, s.ArrivalWindowS, s.AbandonAfterS = 2, 60, 3600 })
	held := func() int64 {
		t.Helper()
		n, err := f.line.PlacesHeld(ctx, "sale", "10.0.0.9")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var toks []string
	for _, who := range []string{"v:squatter", "v:shopper"} {
		if err := f.line.LimitClientPaid(ctx, "sale", &s, "10.0.0.9", who, queue.PowPrice(s.BotProtection, held())); err != nil {
			t.Fatal(err)
		}
		_, tok := f.admitted(t, "sale", who)
		toks = append(toks, tok)
	}
	f.at(time.Second)
	if v := f.verify(t, "sale", toks[1]); !v.Valid { // the shopper comes to checkout
		t.Fatalf("the shopper: %+v", v)
	}
	f.at(61 * time.Second)
	if r := f.tick(t, "sale"); r.NoShows != 1 {
		t.Fatalf("the squatter's slot: %+v", r)
	}
	if n := held(); n != 2 {
		t.Fatalf("after the no-show: the network holds %d, want 2 (the no-show still counts)", n)
	}
	if _, err := f.line.Complete(ctx, toks[1], "sale"); err != nil {
		t.Fatal(err)
	}
	if n := held(); n != 1 {
		t.Fatalf("after the shopper completed: holds %d, want 1", n)
	}
	// Its session would have ended session_ttl_s after its turn: no longer.
	f.at(time.Duration(s.SessionTTLS) * time.Second)
	if n := held(); n != 0 {
		t.Fatalf("after the no-show's session would have ended: holds %d, want 0", n)
	}
}
