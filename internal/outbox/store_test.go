package outbox_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/internal/outbox"
)

// Accepted intents survive a stop between the outbox write and the publish:
// a relay started on the reopened file publishes every one of them.
func TestAcceptIsDurable(t *testing.T) {
	const n = 300
	ctx := testCtx(t)
	path := dbPath(t)
	br := startBroker(t)

	s := openStore(t, path)
	ids := make(map[string]outbox.Intent, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			in, created, err := s.Accept(ctx, "drop", fmt.Sprintf("v%d", i), payload(i))
			if err != nil || !created {
				t.Errorf("accept %d: created %v, %v", i, created, err)
				return
			}
			mu.Lock()
			ids[in.ID] = in
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil { // no relay ran: as if killed right after the 202s
		t.Fatal(err)
	}

	s = openStore(t, path)
	if c, _ := s.Counts(ctx); c != (outbox.Counts{Accepted: n}) {
		t.Fatalf("after reopen counts = %+v, want %d accepted", c, n)
	}
	onPass, ch := passes()
	relay := outbox.NewRelay(s, newPublisher(t, br), outbox.RelayConfig{Logger: quiet, OnPass: onPass})
	runInBackground(t, relay.Run)
	if p := awaitPass(t, ch); p.n != n || p.err != nil {
		t.Fatalf("first pass after restart published %d, %v; want %d", p.n, p.err, n)
	}
	if c, _ := s.Counts(ctx); c != (outbox.Counts{Published: n}) {
		t.Fatalf("counts = %+v, want %d published", c, n)
	}

	seen := map[string]bool{}
	for _, m := range br.Read(t, outbox.DefaultIntentsTopic, n) {
		im := decodeIntent(t, m)
		want, ok := ids[im.IntentID]
		if !ok || seen[im.IntentID] {
			t.Fatalf("unexpected or repeated intent %s", im.IntentID)
		}
		seen[im.IntentID] = true
		if header(m, outbox.HeaderIntentID) != im.IntentID {
			t.Errorf("header intent_id %q, value %q", header(m, outbox.HeaderIntentID), im.IntentID)
		}
		if string(m.Key) != "drop/"+want.Visitor || im.Visitor != want.Visitor || im.Room != "drop" {
			t.Errorf("key %q, room %q, visitor %q; want drop/%s", m.Key, im.Room, im.Visitor, want.Visitor)
		}
		if !bytes.Equal(im.Payload, want.Payload) || !im.AcceptedAt.Equal(want.AcceptedAt) {
			t.Errorf("intent %s: payload %s at %v, want %s at %v", im.IntentID, im.Payload, im.AcceptedAt, want.Payload, want.AcceptedAt)
		}
		got, err := s.Get(ctx, im.IntentID)
		if err != nil || got.Status != outbox.StatusPublished || got.PublishedAt.IsZero() {
			t.Errorf("intent %s: %+v, %v; want published", im.IntentID, got, err)
		}
	}
}

func TestOneOpenIntentPerVisitorAndRoom(t *testing.T) {
	ctx := testCtx(t)
	s := openStore(t, dbPath(t))

	first, created, err := s.Accept(ctx, "drop", "alice", payload(1))
	if err != nil || !created || first.Status != outbox.StatusAccepted {
		t.Fatalf("first accept: %+v, created %v, %v", first, created, err)
	}
	again, created, err := s.Accept(ctx, "drop", "alice", payload(2))
	if err != nil || created || again.ID != first.ID || !bytes.Equal(again.Payload, payload(1)) {
		t.Fatalf("repeat accept: %+v, created %v, %v; want %s with the first payload", again, created, err, first.ID)
	}
	other, _, _ := s.Accept(ctx, "other-room", "alice", payload(3))
	bob, _, _ := s.Accept(ctx, "drop", "bob", payload(4))
	if other.ID == first.ID || bob.ID == first.ID || other.ID == bob.ID {
		t.Fatal("another room or visitor shares the intent")
	}

	// Racing submits of one visitor agree on one intent.
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	creations := 0
	for range 20 {
		wg.Go(func() {
			in, created, err := s.Accept(ctx, "race", "carol", payload(5))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got[in.ID]++
			if created {
				creations++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(got) != 1 || creations != 1 {
		t.Fatalf("20 racing submits made ids %v with %d creations; want one", got, creations)
	}

	// Published is still open.
	if err := s.MarkPublished(ctx, []string{first.ID}); err != nil {
		t.Fatal(err)
	}
	if in, created, _ := s.Accept(ctx, "drop", "alice", payload(6)); created || in.ID != first.ID || in.Status != outbox.StatusPublished {
		t.Fatalf("accept while published: %+v, created %v", in, created)
	}

	// A processed intent is the visitor's one order: a repeat gets it back.
	// A rejected one frees the visitor for a new intent.
	open, _, _ := s.Accept(ctx, "drop", "alice", payload(7))
	if n, err := s.Finish(ctx, []outbox.ResultMessage{{IntentID: open.ID, Status: outbox.ResultProcessed}}); err != nil || n != 1 {
		t.Fatalf("finish processed: %d, %v", n, err)
	}
	again, created, err = s.Accept(ctx, "drop", "alice", payload(8))
	if err != nil || created || again.ID != open.ID || again.Status != outbox.StatusProcessed {
		t.Fatalf("accept after processed: %+v, created %v, %v; want the processed intent back", again, created, err)
	}
	other, _, _ = s.Accept(ctx, "drop", "bob", payload(9))
	if n, err := s.Finish(ctx, []outbox.ResultMessage{{IntentID: other.ID, Status: outbox.ResultRejected, Reason: "sold out"}}); err != nil || n != 1 {
		t.Fatalf("finish rejected: %d, %v", n, err)
	}
	next, created, err := s.Accept(ctx, "drop", "bob", payload(10))
	if err != nil || !created || next.ID == other.ID {
		t.Fatalf("accept after rejected: %+v, created %v, %v; want a new intent", next, created, err)
	}
	if next.Key != other.Key || next.Key == open.Key || len(next.Key) != 32 {
		t.Fatalf("idempotency keys %q (bob), %q (bob again), %q (alice): want one per visitor and room", other.Key, next.Key, open.Key)
	}
}

func TestFinishIsIdempotent(t *testing.T) {
	ctx := testCtx(t)
	s := openStore(t, dbPath(t))
	a, _, _ := s.Accept(ctx, "drop", "a", payload(1))
	b, _, _ := s.Accept(ctx, "drop", "b", payload(2))
	c, _, _ := s.Accept(ctx, "drop", "c", payload(3))
	if err := s.MarkPublished(ctx, []string{a.ID, b.ID}); err != nil {
		t.Fatal(err)
	}

	n, err := s.Finish(ctx, []outbox.ResultMessage{
		{IntentID: a.ID, Status: outbox.ResultProcessed, Reason: "ignored for processed"},
		{IntentID: b.ID, Status: outbox.ResultRejected, Reason: "sold out"},
		{IntentID: a.ID, Status: outbox.ResultRejected, Reason: "too late"}, // a is final already
		{IntentID: "no-such-intent", Status: outbox.ResultProcessed},
		{IntentID: c.ID, Status: "maybe"}, // unknown status
		// c is still PENDING: a result may overtake the relay's mark.
		{IntentID: c.ID, Status: outbox.ResultProcessed},
	})
	if err != nil || n != 3 {
		t.Fatalf("finish changed %d, %v; want 3", n, err)
	}
	if n, err := s.Finish(ctx, []outbox.ResultMessage{{IntentID: b.ID, Status: outbox.ResultProcessed}}); err != nil || n != 0 {
		t.Fatalf("duplicate result changed %d, %v", n, err)
	}
	// A late mark does not reopen a finished intent.
	if err := s.MarkPublished(ctx, []string{c.ID}); err != nil {
		t.Fatal(err)
	}

	for id, want := range map[string]struct {
		status outbox.Status
		reason string
	}{a.ID: {outbox.StatusProcessed, ""}, b.ID: {outbox.StatusRejected, "sold out"}, c.ID: {outbox.StatusProcessed, ""}} {
		in, err := s.Get(ctx, id)
		if err != nil || in.Status != want.status || in.Reason != want.reason || in.FinishedAt.IsZero() {
			t.Errorf("%s: %+v, %v; want %s %q", id, in, err, want.status, want.reason)
		}
	}
	if got, _ := s.Counts(ctx); got != (outbox.Counts{Processed: 2, Rejected: 1}) {
		t.Fatalf("counts = %+v", got)
	}
}

func TestCountsSurviveReopen(t *testing.T) {
	ctx := testCtx(t)
	path := dbPath(t)
	s := openStore(t, path)
	var ids []string
	for i := range 6 {
		in, _, err := s.Accept(ctx, "drop", fmt.Sprint(i), payload(i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, in.ID)
	}
	_ = s.MarkPublished(ctx, ids[:4])
	_, _ = s.Finish(ctx, []outbox.ResultMessage{{IntentID: ids[0], Status: outbox.ResultProcessed}, {IntentID: ids[1], Status: outbox.ResultRejected}})
	want := outbox.Counts{Accepted: 2, Published: 2, Processed: 1, Rejected: 1}
	if got, _ := s.Counts(ctx); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	_ = s.Close()
	s = openStore(t, path)
	if got, _ := s.Counts(ctx); got != want || got.Total() != 6 {
		t.Fatalf("after reopen counts = %+v, want %+v", got, want)
	}
	if p, err := s.Pending(ctx, 10); err != nil || len(p) != 2 || p[0].ID != ids[4] || p[1].ID != ids[5] {
		t.Fatalf("pending = %+v, %v; want the last two in order", p, err)
	}
}

func TestAcceptRejectsBadInput(t *testing.T) {
	ctx := testCtx(t)
	s := openStore(t, dbPath(t))
	big := []byte(`"` + strings.Repeat("x", outbox.MaxPayloadBytes) + `"`)
	for _, tc := range []struct {
		room, visitor string
		payload       []byte
		want          error
	}{
		{"", "v", payload(1), outbox.ErrInvalidIntent},
		{"r", "", payload(1), outbox.ErrInvalidIntent},
		{"r", "v", []byte(`{"unterminated":`), outbox.ErrInvalidPayload},
		{"r", "v", nil, outbox.ErrInvalidPayload},
		{"r", "v", big, outbox.ErrPayloadTooLarge},
	} {
		if _, _, err := s.Accept(ctx, tc.room, tc.visitor, tc.payload); !errors.Is(err, tc.want) {
			t.Errorf("accept(%q, %q, %.20q) = %v, want %v", tc.room, tc.visitor, tc.payload, err, tc.want)
		}
	}
	if c, _ := s.Counts(ctx); c.Total() != 0 {
		t.Fatalf("bad input was stored: %+v", c)
	}
}

func TestClosedStoreRefusesWrites(t *testing.T) {
	ctx := testCtx(t)
	s := openStore(t, dbPath(t))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, _, err := s.Accept(ctx, "r", "v", payload(1)); !errors.Is(err, outbox.ErrClosed) {
		t.Fatalf("accept after close = %v, want ErrClosed", err)
	}
	if err := s.MarkPublished(ctx, []string{"x"}); !errors.Is(err, outbox.ErrClosed) {
		t.Fatalf("mark after close = %v, want ErrClosed", err)
	}
}

func TestGetUnknown(t *testing.T) {
	s := openStore(t, dbPath(t))
	if _, err := s.Get(testCtx(t), "nope"); !errors.Is(err, outbox.ErrNotFound) {
		t.Fatalf("get unknown = %v, want ErrNotFound", err)
	}
}

func TestDurabilitySettings(t *testing.T) {
	ctx := testCtx(t)
	s := openStore(t, dbPath(t))
	if n, err := s.Synchronous(ctx); err != nil || n != 2 {
		t.Fatalf("synchronous = %d, %v; want 2 (FULL)", n, err)
	}
	if m, err := s.JournalMode(ctx); err != nil || m != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", m, err)
	}
}
