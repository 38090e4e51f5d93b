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
