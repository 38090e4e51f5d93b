package queue_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// redirect_url carries a hand-off code by default, and the token itself
// only on a line made with TokenInURL (a checkout that verifies offline).
func TestRedirectCarriesACodeUnlessTokenInURL(t *testing.T) {
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, inURL := range []bool{false, true} {
		clock := clockwork.NewFakeClockAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		line := queue.NewLine(memstore.New(), keys, queue.LineOptions{Clock: clock, TokenInURL: inURL})
		s := queue.DefaultSettings()
		s.TargetURL = "https://shop.example/checkout?x=1"
		if err := line.PutRoom(context.Background(), "sale", s); err != nil {
			t.Fatal(err)
		}
		tk, s, err := line.Enter(context.Background(), "sale", "v:alice")
		if err != nil || tk.State != vocab.StateAdmitted {
			t.Fatalf("enter: %v %s", err, tk.State)
		}
		v, err := line.View(tk, &s)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(*v.RedirectURL)
		q := u.Query()
		switch {
		case q.Get("x") != "1":
			t.Errorf("TokenInURL %v: %q lost the target's query", inURL, *v.RedirectURL)
		case inURL && (q.Get("wr_token") != *v.Token || q.Has("wr_code")):
			t.Errorf("TokenInURL: %q, want the token", *v.RedirectURL)
		case !inURL && (q.Has("wr_token") || q.Get("wr_code") == ""):
			t.Errorf("default: %q, want a code and no token", *v.RedirectURL)
		case !inURL:
			if h, err := keys.ParseHandoff(q.Get("wr_code"), "sale", clock.Now()); err != nil || h.Ticket != tk.ID {
				t.Errorf("the code: %+v %v", h, err)
			}
		}
	}
}
