package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// Behaviour of the ports the line tests above do not reach: many statuses
// at once, completion and verification, reclaim and purge, token holders,
// per-client limits, restore, epoch, events and the drill.

// noJitter makes tokens valid at once.
func noJitter(time.Duration) time.Duration { return 0 }

// admitted enters who into an empty room through the fast track.
func (f *fixture) admitted(t *testing.T, room, who string) (queue.Ticket, string) {
	t.Helper()
	tk := f.enter(t, room, who)
	if tk.State != vocab.StateAdmitted {
		t.Fatalf("%s into an empty room: %s", who, tk.State)
	}
	tok, err := f.line.Token(tk)
	if err != nil {
		t.Fatal(err)
	}
	return tk, tok
}

func testStatusManyIsASignOfLifeAndReportsTheGone(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", func(s *queue.Settings) { s.Paused = true }) // nobody admitted: both wait
	a, b := f.enter(t, "sale", "v:a"), f.enter(t, "sale", "v:b")
	f.clock.Advance(20 * time.Second)
	ts, _, err := f.line.StatusMany(context.Background(), "sale", []string{a.ID, b.ID, "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 || ts[0].State != vocab.StateWaiting || ts[0].Position != 1 || ts[1].Position != 2 ||
		ts[2].State != vocab.StateExpired || ts[2].Reason != "unknown" || ts[1].Waiting != 2 {
		t.Fatalf("status many: %+v", ts)
	}
	// Seen at +20 s: at +40 s with abandon_after_s 30 both still wait.
	f.clock.Advance(20 * time.Second)
	if r := f.tick(t, "sale"); r.Abandoned != 0 {
		t.Fatalf("waiters seen through status many were dropped: %+v", r)
	}
	f.clock.Advance(20 * time.Second)
	if r := f.tick(t, "sale"); r.Abandoned != 2 {
		t.Fatalf("silent waiters kept: %+v", r)
	}
}

func testCompleteFreesTheSlotAndStopsTheToken(t *testing.T, target Open) {
	f := newFixture(t, target, noJitter)
	f.room(t, "sale", func(s *queue.Settings) { s.Capacity = 1 })
	_, tok := f.admitted(t, "sale", "v:a")
	ctx := context.Background()
	if v, err := f.line.Verify(ctx, tok, "sale"); err != nil || !v.Valid {
		t.Fatalf("fresh token: %+v %v", v, err)
	}
	f.clock.Advance(200 * time.Millisecond)
	if tk := f.enter(t, "sale", "v:b"); tk.State != vocab.StateWaiting {
		t.Fatalf("over capacity: %s", tk.State)
	}
	if v, err := f.line.Complete(ctx, tok, "sale"); err != nil || !v.Valid {
		t.Fatalf("complete: %+v %v", v, err)
	}
	for _, step := range []string{"verify", "complete again"} {
		v, err := f.line.Verify(ctx, tok, "sale")
		if step == "complete again" {
			v, err = f.line.Complete(ctx, tok, "sale")
		}
		if err != nil || v.Valid || v.Reason != "completed" {
			t.Fatalf("%s after complete: %+v %v", step, v, err)
		}
	}
	st, err := f.store.Stats(ctx, "sale", f.clock.Now())
	if err != nil || st.CompletedTotal != 1 || st.Active != 0 {
		t.Fatalf("stats after complete: %+v %v", st, err)
	}
	f.clock.Advance(200 * time.Millisecond)
	if r := f.tick(t, "sale"); len(r.Admitted) != 1 {
		t.Fatalf("the freed slot was not given to the waiter: %+v", r)
	}
}

func testExpiredSlotsAreReclaimedThenPurged(t *testing.T, target Open) {
	f := newFixture(t, target, noJitter)
	s := f.room(t, "sale", func(s *queue.Settings) { s.ArrivalWindowS = 0 }) // the session's own end
	tk, tok := f.admitted(t, "sale", "v:a")
	ctx := context.Background()
	f.clock.Advance(time.Duration(s.SessionTTLS)*time.Second + time.Duration(s.JitterMS)*time.Millisecond)
	if got := f.status(t, "sale", tk); got.State != vocab.StateExpired || got.Reason != "reclaimed" {
		t.Fatalf("past its session: %s/%s", got.State, got.Reason)
	}
	if ok, why, err := f.store.Active(ctx, "sale", tk.ID, f.clock.Now()); err != nil || ok || why != "reclaimed" {
		t.Fatalf("active before the tick: %v %q %v", ok, why, err)
	}
	if r := f.tick(t, "sale"); r.Reclaimed != 1 {
		t.Fatalf("tick: %+v", r)
	}
	if ok, why, err := f.store.Active(ctx, "sale", tk.ID, f.clock.Now()); err != nil || ok || why != "reclaimed" {
		t.Fatalf("active after the tick: %v %q %v", ok, why, err)
	}
	if v, err := f.line.Verify(ctx, tok, "sale"); err != nil || v.Valid {
		t.Fatalf("verify after reclaim: %+v %v", v, err)
	}
	f.clock.Advance(queue.EndedKept + time.Second)
	if r := f.tick(t, "sale"); r.Purged != 1 {
		t.Fatalf("ended ticket not purged: %+v", r)
	}
	if _, _, err := f.line.Status(ctx, "sale", tk.ID, tk.Identity); !errors.Is(err, queue.ErrTicketNotFound) {
		t.Fatalf("purged ticket: %v", err)
	}
	if ok, why, _ := f.store.Active(ctx, "sale", tk.ID, f.clock.Now()); ok || why != "unknown" {
		t.Fatalf("active of a purged ticket: %v %q", ok, why)
	}
	if again := f.enter(t, "sale", "v:a"); again.ID == tk.ID {
		t.Fatal("a purged visitor got the old ticket back")
	}
}

func testLeaveEndsATicketOnlyForItsOwner(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	f.room(t, "sale", nil)
	tk, _ := f.admitted(t, "sale", "v:a")
	ctx := context.Background()
	if err := f.line.Leave(ctx, "sale", tk.ID, "v:b"); !errors.Is(err, queue.ErrTicketNotFound) {
		t.Fatalf("leave by another: %v", err)
	}
	if err := f.line.Leave(ctx, "sale", tk.ID, "v:a"); err != nil {
		t.Fatal(err)
	}
	if got := f.status(t, "sale", tk); got.State != vocab.StateExpired || got.Reason != "left" {
		t.Fatalf("after leave: %s/%s", got.State, got.Reason)
	}
	if ok, why, _ := f.store.Active(ctx, "sale", tk.ID, f.clock.Now()); ok || why != "left" {
		t.Fatalf("active after leave: %v %q", ok, why)
	}
}

func testTokensHaveOneHolder(t *testing.T, target Open) {
	f := newFixture(t, target, noJitter)
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 5 })
	ctx := context.Background()
	_, visitorTok := f.admitted(t, "sale", "v:alice")
	_, userTok := f.admitted(t, "sale", "u:bob")
	for _, c := range []struct {
		tok, holder string
		mode        queue.HoldMode
		valid       bool
	}{
		{visitorTok, "v:alice", queue.HoldOwner, true},
		{visitorTok, "v:mallory", queue.HoldOwner, false}, // a copied cookie token
		{userTok, "v:h1", queue.HoldOwner, false},         // a user's token: presenting it first binds nothing at the gate
		{userTok, "v:h1", queue.HoldFirst, true},          // but at a shop's server it does
		{userTok, "v:h1", queue.HoldOwner, true},          // and the gate honours that binding
		{userTok, "v:h2", queue.HoldOwner, false},
		{userTok, "v:h2", queue.HoldFirst, false},
		{userTok, "u:bob", queue.HoldFirst, true}, // the owner always
		{visitorTok, "", queue.HoldFirst, false},
	} {
		v, err := f.line.Hold(ctx, c.tok, "sale", c.holder, c.mode)
		if err != nil || v.Valid != c.valid || (!c.valid && v.Reason != queue.ReasonOtherHolder) {
			t.Fatalf("hold by %q (%s): %+v %v, want valid %v", c.holder, c.mode, v, err, c.valid)
		}
	}
}

// testHandoffCodesRedeemOnceAndRebind: a hand-off code (redirect_url's
// wr_code) is redeemed once for the ticket's token, and binds the token to
// the redeemer in place of a copy's first holder, across servers.
func testHandoffCodesRedeemOnceAndRebind(t *testing.T, target Open) {
	f := newFixture(t, target, noJitter)
	f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 5 })
	ctx := context.Background()
	tk, userTok := f.admitted(t, "sale", "u:bob")
	v, err := f.line.View(tk, ptrTo(f.room(t, "sale", func(s *queue.Settings) { s.BatchSize = 5 })))
	if err != nil || v.RedirectURL == nil {
		t.Fatalf("view: %+v %v", v, err)
	}
	u, _ := url.Parse(*v.RedirectURL)
	code := u.Query().Get(token.HandoffParam)
	if code == "" || u.Query().Has("wr_token") {
		t.Fatalf("redirect_url %q: want a hand-off code, not the token", *v.RedirectURL)
	}
	// A thief presents a copy first and holds it.
	if h, err := f.line.Hold(ctx, userTok, "sale", "v:thief", queue.HoldFirst); err != nil || !h.Valid {
		t.Fatalf("the copy's first hold: %+v %v", h, err)
	}
	if _, r, err := f.line.Redeem(ctx, "drop", code, "v:owner"); err != nil || r.Reason != queue.ReasonCodeInvalid {
		t.Fatalf("another room's redemption: %+v %v", r, err)
	}
	// The owner comes back through the waiting page: the code is redeemed on
	// another server, and the token is the owner's from then on.
	other := queue.NewLine(f.server(), f.keys, queue.LineOptions{Clock: f.clock})
	tok, r, err := other.Redeem(ctx, "sale", code, "v:owner")
	if err != nil || !r.Valid || tok != userTok {
		t.Fatalf("redeem: %q %+v %v", tok, r, err)
	}
	if _, r, err := f.line.Redeem(ctx, "sale", code, "v:thief"); err != nil || r.Reason != queue.ReasonCodeSpent {
		t.Fatalf("a spent code again: %+v %v", r, err)
	}
	for holder, valid := range map[string]bool{"v:owner": true, "v:thief": false} {
		if h, err := f.line.Hold(ctx, userTok, "sale", holder, queue.HoldFirst); err != nil || h.Valid != valid {
			t.Fatalf("hold by %s after the hand-off: %+v %v, want valid %v", holder, h, err, valid)
		}
	}
	// Each view hands out a fresh code; one for a ticket that ended is refused.
	v2, _ := f.line.View(tk, ptrTo(queue.DefaultSettings()))
	if *v2.RedirectURL == *v.RedirectURL {
		t.Fatal("the same code twice")
	}
	u2, _ := url.Parse(*v2.RedirectURL)
	if _, err := f.line.Complete(ctx, userTok, "sale"); err != nil {
		t.Fatal(err)
	}
	if tok, r, err := f.line.Redeem(ctx, "sale", u2.Query().Get(token.HandoffParam), "v:owner"); err != nil || tok != "" || r.Reason != "completed" {
		t.Fatalf("a completed ticket's code: %q %+v %v", tok, r, err)
	}
	f.clock.Advance(token.HandoffTTL)
	if _, r, _ := f.line.Redeem(ctx, "sale", code, "v:owner"); r.Reason != queue.ReasonCodeInvalid {
		t.Fatalf("an expired code: %+v", r)
	}
}

func ptrTo[T any](v T) *T { return &v }

func testPerClientLimits(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	s := f.room(t, "sale", func(s *queue.Settings) { s.BotProtection.PlacesPerIP = 2; s.Paused = true })
	ctx := context.Background()
	for _, who := range []string{"v:a", "v:b"} {
		if err := f.line.LimitClient(ctx, "sale", &s, "10.0.0.1", who); err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		f.enter(t, "sale", who)
	}
	var le *queue.LimitError
	if err := f.line.LimitClient(ctx, "sale", &s, "10.0.0.1", "v:c"); !errors.As(err, &le) || le.Limit != queue.LimitPlaces {
		t.Fatalf("third place of one client: %v", err)
	}
	if err := f.line.LimitClient(ctx, "sale", &s, "10.0.0.1", "v:a"); err != nil {
		t.Fatalf("asking again for a held place: %v", err)
	}
	if err := f.line.LimitClient(ctx, "sale", &s, "10.0.0.2", "v:c"); err != nil {
		t.Fatalf("another client: %v", err)
	}
	// A claim that never became a place lapses after its window.
	f.clock.Advance(queue.PlaceClaimWindow + time.Second)
	if err := f.line.LimitClient(ctx, "sale", &s, "10.0.0.2", "v:d"); err != nil {
		t.Fatalf("after a lapsed claim: %v", err)
	}

	s.BotProtection = queue.BotProtection{EntersPerIPPerMinute: 2}
	for i := range 2 {
		if err := f.line.LimitClient(ctx, "sale", &s, "10.0.0.3", fmt.Sprintf("v:r%d", i)); err != nil {
			t.Fatalf("new place %d of a minute's 2: %v", i, err)
		}
	}
	if err := f.line.LimitClient(ctx, "sale", &s, "10.0.0.3", "v:r2"); !errors.As(err, &le) || le.Limit != queue.LimitEntersPerMinute || le.RetryAfter <= 0 {
		t.Fatalf("third new place in a minute: %v", err)
	}
}

func testRestoreHoldsTheCapacityOnce(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	ctx := context.Background()
	s := f.room(t, "kept", nil)
	if ok, err := f.store.RestoreRoom(ctx, "kept", s, f.clock.Now()); err != nil || ok {
		t.Fatalf("restore over an existing room: %v %v", ok, err)
	}
	// Kept, but held all the same: its data may be older than the tokens
	// out there (Redis restarted from an older snapshot).
	if st, err := f.store.Stats(ctx, "kept", f.clock.Now()); err != nil || st.Held != s.Capacity {
		t.Fatalf("an existing room after a restore: held %d (%v), want its capacity %d", st.Held, err, s.Capacity)
	}
	// A large room: one slot below the largest capacity, so that raising it
	// below frees exactly one. A placeholder per slot kept Redis busy for
	// over 5 s at 1,000,000; the hold is one record whatever the capacity.
	lost := queue.DefaultSettings()
	lost.Capacity = 999_999
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a bound, not a target
	defer cancel()
	if ok, err := f.store.RestoreRoom(rctx, "lost", lost, f.clock.Now()); err != nil || !ok {
		t.Fatalf("restore: %v %v", ok, err)
	}
	rooms, err := f.line.ListRooms(ctx)
	if err != nil || fmt.Sprint(rooms) != "[kept lost]" {
		t.Fatalf("rooms: %v %v", rooms, err)
	}
	stats := func(active, held int64) {
		t.Helper()
		st, err := f.store.Stats(ctx, "lost", f.clock.Now())
		if err != nil || st.Active != active || st.Held != held {
			t.Fatalf("stats: active %d held %d (%v), want active %d held %d", st.Active, st.Held, err, active, held)
		}
	}
	stats(999_999, 999_999) // the dashboard shows the room full

	// While the hold lasts, nobody is admitted: no fast track, no tick.
	a, b := f.enter(t, "lost", "v:a"), f.enter(t, "lost", "v:b")
	if a.State != vocab.StateWaiting || b.State != vocab.StateWaiting {
		t.Fatalf("entries into a held room: %s %s", a.State, b.State)
	}
	f.clock.Advance(time.Second)
	if r := f.tick(t, "lost"); len(r.Admitted) != 0 || r.Reclaimed != 0 {
		t.Fatalf("tick of a held room: %+v", r)
	}
	// The hold counts as that many live slots: one more capacity admits one.
	lost.Capacity = 1_000_000
	f.room(t, "lost", func(x *queue.Settings) { *x = lost })
	f.clock.Advance(time.Second)
	if r := f.tick(t, "lost"); len(r.Admitted) != 1 || r.Admitted[0] != a.ID {
		t.Fatalf("one slot beside the hold: %+v", r)
	}
	stats(1_000_000, 999_999)

	// Once the latest token from before has expired the hold is gone: only a's
	// own slot was reclaimed, and the line moves again.
	f.clock.Advance(time.Duration(lost.SessionTTLS)*time.Second + time.Duration(lost.JitterMS)*time.Millisecond + time.Second)
	f.status(t, "lost", b) // still there
	if r := f.tick(t, "lost"); r.Reclaimed != 1 || len(r.Admitted) != 1 || r.Admitted[0] != b.ID {
		t.Fatalf("after the old tokens expired: %+v", r)
	}
	stats(1, 0)
	if c := f.enter(t, "lost", "v:c"); c.State != vocab.StateAdmitted {
		t.Fatalf("entry into an empty line after the hold: %s", c.State)
	}
	stats(2, 0)
}

func testRoomsAndEpoch(t *testing.T, target Open) {
	f := newFixture(t, target, nil)
	ctx := context.Background()
	e1, err := f.store.Epoch(ctx)
	if err != nil || e1.ID == "" || e1.Rewound {
		t.Fatalf("epoch: %+v %v", e1, err)
	}
	f.room(t, "sale", nil)
	if e2, _ := f.store.Epoch(ctx); e2.ID != e1.ID || e2.Rewound {
		t.Fatalf("epoch changed with a write: %+v then %+v", e1, e2)
	}
	if err := f.line.DeleteRoom(ctx, "sale"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.line.StoredSettings(ctx, "sale"); !errors.Is(err, queue.ErrRoomNotFound) {
		t.Fatalf("deleted room: %v", err)
	}
	if err := f.line.DeleteRoom(ctx, "sale"); !errors.Is(err, queue.ErrRoomNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
	if rooms, _ := f.line.ListRooms(ctx); len(rooms) != 0 {
		t.Fatalf("rooms after delete: %v", rooms)
	}
}

func testListenHearsAdmissionsAndRoomChanges(t *testing.T, target Open) {
	shared := target(t)
	f := newFixtureOn(t, shared, nil)
	s := f.room(t, "sale", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rooms, admits := make(chan string, 100), make(chan []queue.Admitted, 100)
	done := make(chan error, 1)
	other := shared() // another server listens
	go func() {
		done <- other.Listen(ctx, func(_ string, adm []queue.Admitted) { admits <- adm }, func(room string) { rooms <- room })
	}()
	// Subscribing is asynchronous: write until the listener hears a change.
	heard := false
	for i := 0; i < 500 && !heard; i++ {
		if err := f.line.PutRoom(ctx, "sale", s); err != nil {
			t.Fatal(err)
		}
		select {
		case room := <-rooms:
			heard = room == "sale"
		case <-time.After(10 * time.Millisecond):
		}
	}
	if !heard {
		t.Fatal("the listener never heard a room change")
	}
	f.blockFastTrack(t, "sale")
	w := f.enter(t, "sale", "v:w")
	f.clock.Advance(200 * time.Millisecond)
	r := f.tick(t, "sale")
	if len(r.Admitted) == 0 {
		t.Fatalf("nobody admitted: %+v", r)
	}
	select {
	case adm := <-admits:
		if ids := queue.AdmittedIDs(adm); fmt.Sprint(ids) != fmt.Sprint(r.Admitted) {
			t.Fatalf("heard %v, admitted %v", ids, r.Admitted)
		}
		// The event's times are the tickets' own: a server shows them
		// admitted without reading them.
		for _, a := range adm {
			got, err := f.store.Status(ctx, "sale", nil, a.ID, "", f.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			if got.State != vocab.StateAdmitted || !got.AdmittedAt.Equal(a.At) || !got.OrderableAt.Equal(a.Orderable) || !got.ExpiresAt.Equal(a.Expires) {
				t.Fatalf("heard %s admitted %v, orderable %v, expiring %v; the store has %s %v %v %v",
					a.ID, a.At, a.Orderable, a.Expires, got.State, got.AdmittedAt, got.OrderableAt, got.ExpiresAt)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("admission of %s not heard", w.ID)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("listen: %v", err)
	}
}

func testDrillReachesEveryServer(t *testing.T, target Open) {
	shared := target(t)
	a, b := shared(), shared()
	ctx := context.Background()
	if on, err := b.Probe(ctx); err != nil || on != nil {
		t.Fatalf("no drill: %v %v", on, err)
	}
	yes := true
	if err := a.SetDrill(ctx, &yes); err != nil {
		t.Fatal(err)
	}
	if on, err := b.Probe(ctx); err != nil || on == nil || !*on {
		t.Fatalf("drill on: %v %v", on, err)
	}
	if err := a.SetDrill(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if on, err := b.Probe(ctx); err != nil || on != nil {
		t.Fatalf("drill ended: %v %v", on, err)
	}
}
