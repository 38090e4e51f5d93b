package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

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
			if want := queue.StateScheduled; room == "prequeue" && tickets[0].State != want {
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
