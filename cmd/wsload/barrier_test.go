package main

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestPeersMeet: no peer passes a point before every peer reached it, and
// a missing peer ends the wait at the timeout with an error.
func TestPeersMeet(t *testing.T) {
	dir := t.TempDir()
	const peers = 3
	var mu sync.Mutex
	reached := 0
	var wg sync.WaitGroup
	passed := make(chan int, peers)
	for i := range peers {
		wg.Go(func() {
			mu.Lock()
			reached++
			mu.Unlock()
			if err := meet(context.Background(), dir, "s1-ready", strconv.Itoa(i), peers, time.Minute); err != nil {
				t.Error(err)
			}
			mu.Lock()
			passed <- reached
			mu.Unlock()
		})
	}
	wg.Wait()
	close(passed)
	for n := range passed {
		if n != peers {
			t.Errorf("a peer passed with %d of %d arrived", n, peers)
		}
	}

	if err := meet(context.Background(), dir, "s1-done", "0", 2, 50*time.Millisecond); err == nil {
		t.Error("meet without its peer returned nil")
	}
}
