package queue_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

var viewNow = time.Date(2030, 1, 2, 10, 0, 0, 0, time.UTC)

func viewRoom(edit func(*queue.Settings)) *queue.Settings {
	s := queue.DefaultSettings()
	if edit != nil {
		edit(&s)
	}
	return &s
}

func waiter(pos int64) queue.Ticket {
	return queue.Ticket{Room: "r", ID: "t1", State: vocab.StateWaiting, Position: pos, EntryPosition: pos + 20,
		Waiting: 500, EnteredAt: viewNow.Add(-time.Minute)}
}

// TestViewRules: the rules every answer with a ticket follows (API, pages,
// push and the gates all show queue.View).
func TestViewRules(t *testing.T) {
	est := queue.NewEstimator()
	t.Run("waiting in a ranked line has a place and an estimate", func(t *testing.T) {
		v := queue.NewView(waiter(100), viewRoom(nil), est, viewNow, "")
		if v.Position != 100 || v.EntryPosition != 120 || v.ETAS == nil || v.ETALowS == nil || v.ETAHighS == nil ||
			*v.ETALowS > *v.ETAS || *v.ETAS > *v.ETAHighS || *v.ETAS < 1 {
			t.Errorf("view %+v, want position 100 from 120 and an estimate with its range", v)
		}
		// 100 at the default 10 per 200 ms: 2 s; the tier of #100 is 2 s.
		if *v.ETAS != 2 || v.NextUpdateMS != 2000 || v.EnteredAt == nil || *v.EnteredAt != "2030-01-02T09:59:00.000Z" {
			t.Errorf("eta_s %d, next_update_ms %d, entered_at %v; want 2, 2000, 09:59:00.000Z", *v.ETAS, v.NextUpdateMS, v.EnteredAt)
		}
		if v.QueueingMethod != queue.MethodFIFO || v.Token != nil || v.RedirectURL != nil || v.OrderableAt != nil {
			t.Errorf("view %+v: a waiter has method fifo and no token", v)
		}
		if v := queue.NewView(waiter(600), viewRoom(nil), est, viewNow, ""); v.NextUpdateMS != 10000 {
			t.Errorf("#600 hears every %d ms, want the back tier's 10000", v.NextUpdateMS)
		}
	})
	t.Run("paused: no estimate", func(t *testing.T) {
		v := queue.NewView(waiter(100), viewRoom(func(s *queue.Settings) { s.Paused = true }), est, viewNow, "")
		if !v.Paused || v.ETAS != nil || v.ETALowS != nil || v.ETAHighS != nil || v.Position != 100 {
			t.Errorf("paused view %+v, want paused, the place kept and eta null", v)
		}
	})
	t.Run("no estimator: no estimate", func(t *testing.T) {
		if v := queue.NewView(waiter(100), viewRoom(nil), nil, viewNow, ""); v.ETAS != nil {
			t.Errorf("eta_s %d without an estimator", *v.ETAS)
		}
	})
	t.Run("random: a draw has no places", func(t *testing.T) {
		v := queue.NewView(waiter(100), viewRoom(func(s *queue.Settings) { s.QueueingMethod = queue.MethodRandom }), est, viewNow, "")
		if v.Position != 0 || v.EntryPosition != 0 || v.ETAS != nil || v.Waiting != 500 || v.QueueingMethod != queue.MethodRandom {
			t.Errorf("random view %+v, want position 0, entry 0, eta null, waiting 500", v)
		}
	})
	t.Run("scheduled: position 0, the opening, and a look just after it", func(t *testing.T) {
		opens := viewNow.Add(4 * time.Second)
		s := viewRoom(func(s *queue.Settings) { s.OpensAt = &opens })
		v := queue.NewView(queue.Ticket{Room: "r", ID: "t1", State: vocab.StateScheduled, Position: 7, Waiting: 9}, s, est, viewNow, "")
		if v.Position != 0 || v.OpensAt == nil || *v.OpensAt != "2030-01-02T10:00:04.000Z" || v.ETAS != nil || v.EnteredAt != nil {
			t.Errorf("scheduled view %+v, want position 0, opens_at 10:00:04.000Z, no eta", v)
		}
		if v.NextUpdateMS != 5000 {
			t.Errorf("4 s before the opening: next_update_ms %d, want 5000 (just after it)", v.NextUpdateMS)
		}
		if v := queue.NewView(queue.Ticket{State: vocab.StateScheduled}, s, est, viewNow.Add(-time.Hour), ""); v.NextUpdateMS != 10000 {
			t.Errorf("an hour before: next_update_ms %d, want the slowest tier's 10000", v.NextUpdateMS)
		}
	})
	t.Run("admitted: the token, its turn and the way to checkout", func(t *testing.T) {
		tk := queue.Ticket{Room: "r", ID: "t1", State: vocab.StateAdmitted, EntryPosition: 40, EnteredAt: viewNow.Add(-time.Minute),
			OrderableAt: viewNow.Add(1500 * time.Millisecond)}
		s := viewRoom(func(s *queue.Settings) { s.TargetURL = "https://shop.example/buy?sku=7" })
		v := queue.NewView(tk, s, est, viewNow, "tok.en")
		if v.Token == nil || *v.Token != "tok.en" || v.OrderableAt == nil || *v.OrderableAt != "2030-01-02T10:00:01.500Z" || v.ETAS != nil {
			t.Fatalf("admitted view %+v", v)
		}
		u, err := url.Parse(*v.RedirectURL)
		if err != nil || u.Host != "shop.example" || u.Query().Get("sku") != "7" || u.Query().Get("wr_token") != "tok.en" {
			t.Errorf("redirect_url %q, want the target with its query and wr_token", *v.RedirectURL)
		}
		if at, err := v.OrderableTime(); err != nil || !at.Equal(tk.OrderableAt) {
			t.Errorf("OrderableTime %v, %v; want %v", at, err, tk.OrderableAt)
		}
		if v.EntryPosition != 40 || v.NextUpdateMS != 2000 {
			t.Errorf("entry_position %d, next_update_ms %d; want 40 and the front tier's 2000", v.EntryPosition, v.NextUpdateMS)
		}
	})
	t.Run("sold out carries the room's message; closed does not", func(t *testing.T) {
		s := viewRoom(func(s *queue.Settings) { s.SoldOutMessage = queue.Text("All gone") })
		v := queue.NewView(queue.Ticket{Room: "r", ID: "t1", State: vocab.StateSoldOut}, s, est, viewNow, "")
		if v.SoldOutMessage.String() != "All gone" || v.NextUpdateMS != 10000 {
			t.Errorf("sold out view %+v, want the message and the slowest tier", v)
		}
		v = queue.NewView(queue.Ticket{Room: "r", ID: "t1", State: vocab.StateClosed, Reason: queue.ReasonEnded}, s, est, viewNow, "")
		if !v.SoldOutMessage.IsZero() || v.Reason != queue.ReasonEnded || v.NextUpdateMS != 10000 {
			t.Errorf("closed view %+v, want no sold-out message, reason ended", v)
		}
	})
	t.Run("full: when to try again", func(t *testing.T) {
		v := queue.NewView(queue.Ticket{Room: "r", State: vocab.StateFull}, viewRoom(nil), est, viewNow, "")
		if v.RetryAfterS == nil || *v.RetryAfterS != 15 || v.NextUpdateMS != 15000 {
			t.Errorf("full view %+v, want retry_after_s 15", v)
		}
	})
	t.Run("bypassed and expired: the front tier's pace, method named", func(t *testing.T) {
		s := viewRoom(func(s *queue.Settings) { s.QueueingMethod = "" })
		for _, st := range []queue.State{vocab.StateBypassed, vocab.StateExpired} {
			v := queue.NewView(queue.Ticket{Room: "r", ID: "t1", State: st, EntryPosition: 9}, s, est, viewNow, "")
			if v.NextUpdateMS != 2000 || v.QueueingMethod != queue.MethodFIFO || v.EntryPosition != 0 || v.AcceptURL != nil {
				t.Errorf("%s view %+v, want 2000 ms, fifo, no entry position", st, v)
			}
		}
	})
}

// TestViewJSONIsTheAPIContract: the field names docs/api.md documents, with
// nulls where it says so, and a view read back is the same view.
func TestViewJSONIsTheAPIContract(t *testing.T) {
	v := queue.NewView(waiter(3), viewRoom(func(s *queue.Settings) { s.Paused = true }), queue.NewEstimator(), viewNow, "")
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"room", "ticket", "state", "position", "waiting", "eta_s", "eta_low_s", "eta_high_s", "next_update_ms",
		"token", "orderable_at", "redirect_url", "paused", "accept_url", "entry_position", "entered_at", "queueing_method", "opens_at"} {
		if _, ok := m[k]; !ok {
			t.Errorf("%s missing from %s", k, data)
		}
	}
	for _, k := range []string{"eta_s", "token", "accept_url", "opens_at"} {
		if m[k] != nil {
			t.Errorf("%s = %v, want null: %s", k, m[k], data)
		}
	}
	for _, k := range []string{"reason", "sold_out_message", "retry_after_s"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s present in a waiter's view: %s", k, data)
		}
	}
	var back queue.View
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(data) {
		t.Errorf("read back:\n%s\nwant\n%s", again, data)
	}
}
