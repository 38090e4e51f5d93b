package dashboard

import (
	"testing"
	"time"
)

func TestWaitWindowQuantilesOverTheLastWaits(t *testing.T) {
	w := NewWaitWindow(100)
	if _, _, ok := w.WaitQuantiles("sale"); ok {
		t.Fatal("quantiles of nothing")
	}
	for i := 1; i <= 100; i++ {
		w.Observe("sale", time.Duration(i)*time.Second)
	}
	p50, p95, ok := w.WaitQuantiles("sale")
	if !ok || p50 != 51*time.Second || p95 != 96*time.Second {
		t.Fatalf("p50 %v p95 %v", p50, p95)
	}
	// The window keeps the last 100: a hundred short waits replace the long ones.
	for i := 0; i < 100; i++ {
		w.Observe("sale", time.Second)
	}
	if p50, p95, _ := w.WaitQuantiles("sale"); p50 != time.Second || p95 != time.Second {
		t.Fatalf("after the window moved: p50 %v p95 %v", p50, p95)
	}
	if _, _, ok := w.WaitQuantiles("other"); ok {
		t.Fatal("rooms share a window")
	}
}
