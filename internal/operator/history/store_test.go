package history_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/queue"
)

// Additions counted while Redis is down wait for it; each day of history
// expires --history-keep after it ends.
func TestAdditionsWaitForRedisAndDaysExpire(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	h := history.New(rdb, "t:", 48*time.Hour, nil)
	at := time.Now().UTC().Truncate(time.Minute)
	srv.Kill()
	h.Add("sale", at, history.ChallengesIssued, 3)
	if err := h.Flush(ctx); err == nil {
		t.Fatal("flush with Redis down: no error")
	}
	srv.Restart(t)
	h.Add("sale", at, history.ChallengesIssued, 2)
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mins, err := h.Range(ctx, "sale", at, at.Add(time.Minute))
	if err != nil || len(mins) != 1 || mins[0].Added[history.ChallengesIssued] != 5 {
		t.Fatalf("after Redis came back: %+v (%v), want 5 challenges", mins, err)
	}
	key := "t:{sale}:history:" + at.Format("20060102")
	y, m, d := at.Date()
	want := time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC).Add(48 * time.Hour)
	got, err := rdb.ExpireTime(ctx, key).Result()
	if err != nil || got != time.Duration(want.Unix())*time.Second {
		t.Errorf("the day expires at %v (%v), want %v", got, err, want.Unix())
	}
}

func TestWindowNamesBadValues(t *testing.T) {
	ctx := context.Background()
	h := history.New(redistest.Shared(t).Client(t), redistest.Prefix(t), 0, nil)
	now := time.Date(2030, 1, 2, 3, 4, 30, 0, time.UTC)
	for _, c := range []struct{ from, to, field string }{
		{"2030-01-02", "", "from"},
		{"", "noon", "to"},
		{"2030-01-02T03:00:00Z", "2030-01-02T02:00:00Z", "to"},
	} {
		_, _, err := h.Window(ctx, "sale", c.from, c.to, now)
		var fe *queue.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("from %q to %q: %v, want a field error on %s", c.from, c.to, err, c.field)
		}
	}
	// No history: the days kept, to the end of this minute.
	from, to, err := h.Window(ctx, "sale", "", "", now)
	if err != nil || !to.Equal(time.Date(2030, 1, 2, 3, 5, 0, 0, time.UTC)) || !from.Equal(now.Add(-history.DefaultKeep-24*time.Hour).Truncate(time.Minute)) {
		t.Errorf("default window %v – %v (%v)", from, to, err)
	}
}
