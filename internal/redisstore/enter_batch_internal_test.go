package redisstore

import (
	"fmt"
	"testing"
)

// TestTakeBatchKeepsOrderAndDefersASecondEnter: a call carries enters in
// their order, at most maxEnterBatch, and never one identity twice (the
// second would not see the first's ticket, which the call writes last).
func TestTakeBatchKeepsOrderAndDefersASecondEnter(t *testing.T) {
	var waiting []*enterReq
	for i := range maxEnterBatch + 10 {
		waiting = append(waiting, &enterReq{identity: fmt.Sprintf("v:%d", i%(maxEnterBatch+5))})
	}
	batch, rest := takeBatch(waiting)
	if len(batch) != maxEnterBatch {
		t.Fatalf("batch of %d, want %d", len(batch), maxEnterBatch)
	}
	for i, r := range batch {
		if r != waiting[i] {
			t.Fatalf("batch[%d] is not the %dth waiting enter", i, i)
		}
	}
	if len(rest) != 10 || rest[0] != waiting[maxEnterBatch] {
		t.Fatalf("rest %d, want the 10 after the batch in order", len(rest))
	}

	a, b := &enterReq{identity: "v:a"}, &enterReq{identity: "v:b"}
	a2 := &enterReq{identity: "v:a"}
	batch, rest = takeBatch([]*enterReq{a, a2, b})
	if len(batch) != 2 || batch[0] != a || batch[1] != b || len(rest) != 1 || rest[0] != a2 {
		t.Fatalf("batch %v rest %v: want a and b now, a's second enter next", batch, rest)
	}
}
