package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/queue"
)

// TestConcurrentEntersShareCalls: enters that arrive while one is in
// flight go together in the next call (the conformance suite checks that
// they come out as if one by one), and a lone enter still goes alone.
func TestConcurrentEntersShareCalls(t *testing.T) {
	f := newFixture(t, "", nil)
	store := f.store.(*redisstore.Store)
	f.room(t, "crowd", func(s *queue.Settings) { s.Paused = true })
	ctx := context.Background()
	before := redisstore.EnterCalls(store)
	if _, _, err := f.line.Enter(ctx, "crowd", "v:alone"); err != nil {
		t.Fatal(err)
	}
	if got := redisstore.EnterCalls(store) - before; got != 1 {
		t.Fatalf("a lone enter made %d calls, want 1", got)
	}

	const n = 200
	before = redisstore.EnterCalls(store)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, _, err := f.line.Enter(ctx, "crowd", fmt.Sprintf("v:%d", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	calls := redisstore.EnterCalls(store) - before
	if calls >= n {
		t.Fatalf("%d enters at once made %d calls: none shared one", n, calls)
	}
	t.Logf("%d enters in %d calls", n, calls)
	if st, err := f.store.Stats(ctx, "crowd", f.clock.Now()); err != nil || st.Waiting != n+1 {
		t.Fatalf("stats %+v, %v: want %d waiting", st, err, n+1)
	}
}
