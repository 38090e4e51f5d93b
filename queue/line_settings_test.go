package queue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/store/memstore"
	"github.com/waitroom/waitroom/queue"
)

// TestSettingsReadersSayWhereTheyRead: Settings serves the cache while it is
// fresh and the store after; StoredSettings always reads the store;
// CachedSettings only the cache, never the store.
func TestSettingsReadersSayWhereTheyRead(t *testing.T) {
	store := memstore.New()
	line, clock := fakeClockLine(t, store)
	ctx := context.Background()
	if _, ok := line.CachedSettings("drop"); ok {
		t.Fatal("CachedSettings knows a room nobody read")
	}
	s := queue.DefaultSettings()
	s.Capacity = 10
	if err := store.PutRoom(ctx, "drop", s); err != nil {
		t.Fatal(err)
	}
	if _, ok := line.CachedSettings("drop"); ok {
		t.Fatal("CachedSettings read the store")
	}
	if got, err := line.Settings(ctx, "drop"); err != nil || got.Capacity != 10 {
		t.Fatalf("Settings: %d %v", got.Capacity, err)
	}
	// Changed in the store behind the line's back (no announcement).
	s.Capacity = 20
	if err := store.PutRoom(ctx, "drop", s); err != nil {
		t.Fatal(err)
	}
	if got, _ := line.Settings(ctx, "drop"); got.Capacity != 10 {
		t.Errorf("Settings while the cache is fresh: capacity %d, want the cached 10", got.Capacity)
	}
	if got, ok := line.CachedSettings("drop"); !ok || got.Capacity != 10 {
		t.Errorf("CachedSettings: capacity %d %v, want the cached 10", got.Capacity, ok)
	}
	if got, err := line.StoredSettings(ctx, "drop"); err != nil || got.Capacity != 20 {
		t.Errorf("StoredSettings: capacity %d %v, want the stored 20", got.Capacity, err)
	}
	clock.Advance(time.Minute)
	if got, _ := line.Settings(ctx, "drop"); got.Capacity != 20 {
		t.Errorf("Settings once the cache is stale: capacity %d, want the stored 20", got.Capacity)
	}
	if _, err := line.StoredSettings(ctx, "gone"); !errors.Is(err, queue.ErrRoomNotFound) {
		t.Errorf("StoredSettings of no room: %v", err)
	}
}

// slowRead is a store whose next GetRoom, once armed, reads the room and
// then waits for release before it answers: a read on its way while an
// operator changes the room.
type slowRead struct {
	queue.Store
	read    chan struct{} // closed once the armed read has read
	release chan struct{}
}

func (s *slowRead) GetRoom(ctx context.Context, room string) (queue.Settings, error) {
	got, err := s.Store.GetRoom(ctx, room)
	if s.read != nil {
		read := s.read
		s.read = nil
		close(read)
		<-s.release
	}
	return got, err
}

// TestAReadOnItsWayDoesNotUndoAPut: a store read of a room's settings that
// began before this server's PutRoom answers after it with the old
// settings; they are not cached over the new ones (the admission loop's
// read did that, and for a tick the gate asked no proof of work of a room
// that had just turned it on).
func TestAReadOnItsWayDoesNotUndoAPut(t *testing.T) {
	store := &slowRead{Store: memstore.New()}
	line, clock := fakeClockLine(t, store)
	ctx := context.Background()
	s := queue.DefaultSettings()
	s.Capacity = 10
	if err := line.PutRoom(ctx, "drop", s); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute) // the cache is stale: the next read goes to the store
	store.read, store.release = make(chan struct{}), make(chan struct{})
	read := store.read
	done := make(chan queue.Settings)
	go func() {
		got, _ := line.Settings(ctx, "drop")
		done <- got
	}()
	<-read // the old settings are on their way
	s.Capacity = 20
	if err := line.PutRoom(ctx, "drop", s); err != nil {
		t.Fatal(err)
	}
	close(store.release)
	if got := <-done; got.Capacity != 10 {
		t.Fatalf("the slow read answered capacity %d, want the 10 it read", got.Capacity)
	}
	if got, err := line.Settings(ctx, "drop"); err != nil || got.Capacity != 20 {
		t.Errorf("after the put and the slow read: capacity %d %v, want the put's 20", got.Capacity, err)
	}
	if got, ok := line.CachedSettings("drop"); !ok || got.Capacity != 20 {
		t.Errorf("cached: capacity %d %v, want 20", got.Capacity, ok)
	}
}
