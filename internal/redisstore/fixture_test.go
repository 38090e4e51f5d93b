package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/redisstore"
	"github.com/waitroom/waitroom/internal/redistest"
	"github.com/waitroom/waitroom/internal/token"
	"github.com/waitroom/waitroom/queue"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

type fixture struct {
	line  *queue.Line
	store *redisstore.Store
	clock *clockwork.FakeClock
	keys  *token.Keyset
}

// newFixture gives a line on the shared real Redis, with its own key prefix,
// a fake clock and a jitter that is fixed unless the test sets one.
func newFixture(t *testing.T, prefix string, jitter func(time.Duration) time.Duration) *fixture {
	t.Helper()
	srv := redistest.Shared(t)
	if prefix == "" {
		prefix = redistest.Prefix(t)
	}
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys.Issuer = "http://waitroom.test"
	clock := clockwork.NewFakeClockAt(t0)
	if jitter == nil {
		jitter = func(max time.Duration) time.Duration { return max / 2 }
	}
	store := redisstore.New(srv.Client(t), prefix)
	return &fixture{
		line:  queue.NewLine(store, keys, queue.LineOptions{Clock: clock, Jitter: jitter}),
		store: store, clock: clock, keys: keys,
	}
}

func (f *fixture) room(t *testing.T, name string, edit func(*queue.Settings)) queue.Settings {
	t.Helper()
	s := queue.DefaultSettings()
	if edit != nil {
		edit(&s)
	}
	s.Normalize()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := f.line.PutRoom(context.Background(), name, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *fixture) enter(t *testing.T, room, who string) queue.Ticket {
	t.Helper()
	tk, _, err := f.line.Enter(context.Background(), room, who)
	if err != nil {
		t.Fatalf("enter %s: %v", who, err)
	}
	return tk
}

func (f *fixture) status(t *testing.T, room string, tk queue.Ticket) queue.Ticket {
	t.Helper()
	got, _, err := f.line.Status(context.Background(), room, tk.ID, tk.Identity)
	if err != nil {
		t.Fatalf("status %s: %v", tk.ID, err)
	}
	return got
}

func (f *fixture) tick(t *testing.T, room string) queue.TickResult {
	t.Helper()
	s, err := f.line.Room(context.Background(), room)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.line.Tick(context.Background(), room, &s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fill makes the line non-empty so later entries cannot take the fast track.
func (f *fixture) blockFastTrack(t *testing.T, room string) {
	t.Helper()
	s, _ := f.line.Room(context.Background(), room)
	for i := int64(0); i < s.BatchSize; i++ {
		f.enter(t, room, fmt.Sprintf("v:fast-%d", i))
	}
}
