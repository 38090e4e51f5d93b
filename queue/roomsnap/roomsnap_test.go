package roomsnap_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/queue/roomsnap"
)

func TestSnapshotKeepsRoomsAndEpochAcrossOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), roomsnap.FileName)
	s, err := roomsnap.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st := queue.DefaultSettings()
	st.Capacity, st.AllowedEmbedders = 7, []string{"https://shop.example.com"}
	for _, room := range []string{"sale", "gone"} {
		if err := s.SaveRoom(ctx, room, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteRoom(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveEpoch(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()

	s, err = roomsnap.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rooms, epoch, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := rooms["sale"]
	if !ok || len(rooms) != 1 || epoch != "e1" || got.Capacity != 7 || !slices.Equal(got.AllowedEmbedders, st.AllowedEmbedders) {
		t.Fatalf("loaded %+v epoch %q", rooms, epoch)
	}
}

// TestRestartAcrossRedisDataLoss: a server that knew a room, restarted
// while Redis lost its data (restarted without persistence), puts the room
// back from its snapshot, and holds the room's capacity until the entry
// tokens issued before the loss have expired: capacity is never exceeded.
func TestRestartAcrossRedisDataLoss(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	keys, _ := token.Generate()
	clock := clockwork.NewFakeClock()
	prefix := redistest.Prefix(t)
	path := filepath.Join(t.TempDir(), roomsnap.FileName)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The first life of the server: a room, three admitted visitors.
	snap, err := roomsnap.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	line := queue.NewLine(redisstore.New(rdb, prefix), keys, queue.LineOptions{Clock: clock, Snapshot: snap,
		Jitter: func(time.Duration) time.Duration { return 0 }})
	st := queue.DefaultSettings()
	st.Capacity, st.SessionTTLS, st.AllowedEmbedders = 3, 60, []string{"https://shop.example.com"}
	if err := line.PutRoom(ctx, "sale", st); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if tk, _, err := line.Enter(ctx, "sale", "before-"+string(rune('a'+i))); err != nil || tk.State != vocab.StateAdmitted {
			t.Fatalf("enter before the loss: %+v %v", tk, err)
		}
	}
	actx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = queue.NewAdmitter(line).Run(actx) }()
	if err := clock.BlockUntilContext(ctx, 2); err != nil { // list loop and room loop: the epoch is saved
		t.Fatal(err)
	}
	stop()
	<-done
	_ = snap.Close()

	// Redis restarts empty while the server is down.
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	snap, err = roomsnap.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	clock = clockwork.NewFakeClockAt(clock.Now()) // the first life's sleepers stay on the old one
	line = queue.NewLine(redisstore.New(rdb, prefix), keys, queue.LineOptions{Clock: clock, Snapshot: snap,
		Jitter: func(time.Duration) time.Duration { return 0 }})
	if got, ok := line.CachedSettings("sale"); !ok || got.Capacity != 3 || len(got.AllowedEmbedders) != 1 {
		t.Fatalf("the restarted server does not know the room from its snapshot: %+v %v", got, ok)
	}
	ticked := make(chan struct{}, 100)
	adm := queue.NewAdmitter(line)
	adm.OnTick = func(string, queue.Settings, queue.TickResult) { ticked <- struct{}{} }
	go func() { _ = adm.Run(ctx) }()
	if err := clock.BlockUntilContext(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := line.StoredSettings(ctx, "sale"); err != nil {
		t.Fatalf("room not put back after the data loss: %v", err)
	}
	// The three tokens from before still verify offline for 60 s: a
	// newcomer waits instead of making a fourth.
	restoredAt := clock.Now().Truncate(time.Millisecond) // the line keeps milliseconds
	tk, _, err := line.Enter(ctx, "sale", "after")
	if err != nil || tk.State != vocab.StateWaiting {
		t.Fatalf("a newcomer right after the loss: %+v %v", tk, err)
	}
	step := func() {
		// Both loops (rooms list, the room's ticks) wait on the clock first,
		// so that the advance reaches them.
		if err := clock.BlockUntilContext(ctx, 2); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		<-ticked
	}
	for range 10 {
		step()
	}
	if tk, _, _ := line.Status(ctx, "sale", tk.ID, "after"); tk.State != vocab.StateWaiting {
		t.Fatalf("admitted while tokens from before could still be valid: %+v", tk)
	}
	// Once the latest of them has expired, admission resumes.
	for i := 0; i < 120; i++ {
		step()
		if tk, _, _ = line.Status(ctx, "sale", tk.ID, "after"); tk.State == vocab.StateAdmitted {
			break
		}
	}
	if tk.State != vocab.StateAdmitted {
		t.Fatalf("never admitted after the hold: %+v", tk)
	}
	if held := tk.AdmittedAt.Sub(restoredAt); held < 61*time.Second { // jitter 1 s + session 60 s
		t.Fatalf("admitted %v after the restore, before the tokens from before expired", held)
	}
}
