package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// soldOutMessage is SOLD_ROOM's, which the sold out page must show.
const soldOutMessage = "All 500 pairs are gone. Thank you!"

// methodRooms sets up the rooms web/e2e/a11y.mjs audits the queueing
// methods in: draw (random, paused, people in it), maint (reject), full
// (max_waiting 1, taken) and drop (paused, sold out and undone by the script).
func methodRooms(t *testing.T, site *browserSite) {
	t.Helper()
	ctx := context.Background()
	rooms := map[string]func(*queue.Settings){
		"draw":  func(s *queue.Settings) { s.QueueingMethod = queue.MethodRandom },
		"maint": func(s *queue.Settings) { s.QueueingMethod = queue.MethodReject },
		"full":  func(s *queue.Settings) { s.MaxWaiting = 1 },
		"drop":  func(s *queue.Settings) { s.SoldOutMessage = queue.Text(soldOutMessage) },
	}
	for name, edit := range rooms {
		s := browserRoomSettings()
		// The waiters put ahead have no page: keep them for the whole run,
		// which on a loaded machine reaches these rooms after 5 minutes.
		s.AbandonAfterS = 3600
		edit(&s)
		if err := site.line.PutRoom(ctx, name, s); err != nil {
			t.Fatalf("put room %s: %v", name, err)
		}
	}
	for _, room := range []string{"draw", "draw", "full", "drop"} {
		if _, _, err := site.line.Enter(ctx, room, "v:ahead-"+queue.RandomID()); err != nil {
			t.Fatal(err)
		}
	}
}

type soldOutFact struct {
	Lang, Viewport, Message, Before, After string
	ShownMs                                int64
	Live                                   int
}

// checkSoldOutFacts: in Chromium, sold out reached every open page within a
// tick of the admin call, with the room's message, the page still connected,
// and the undo put the visitor back in its place.
func checkSoldOutFacts(t *testing.T, facts []soldOutFact, want int) {
	t.Helper()
	if len(facts) != want {
		t.Errorf("%d sold out pages checked, want %d", len(facts), want)
	}
	for _, f := range facts {
		if f.ShownMs > (2*time.Second).Milliseconds() || f.Message != soldOutMessage || f.Live != 1 ||
			f.Before == "" || f.Before != f.After {
			t.Errorf("%s %s: sold out page %+v", f.Lang, f.Viewport, f)
		}
		t.Logf("%s %s: sold out shown %d ms after the admin call", f.Lang, f.Viewport, f.ShownMs)
	}
}
