package redisstore

import (
	"context"
	"fmt"
	"testing"
)

// TestTakeBatchKeepsOrderAndDefersASecondEnter: a call carries enters in
// their order, at most maxEnterBatch, never one identity twice (the second
// would not see the first's ticket, which the call writes last), and none
// whose caller gave up.
func TestTakeBatchKeepsOrderAndDefersASecondEnter(t *testing.T) {
	var waiting []*enterReq
	for i := range maxEnterBatch + 10 {
		waiting = append(waiting, &enterReq{ctx: context.Background(), identity: fmt.Sprintf("v:%d", i%(maxEnterBatch+5))})
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

	bg := context.Background()
	gone, cancel := context.WithCancel(bg)
	cancel()
	a, b := &enterReq{ctx: bg, identity: "v:a"}, &enterReq{ctx: bg, identity: "v:b"}
	a2, left := &enterReq{ctx: bg, identity: "v:a"}, &enterReq{ctx: gone, identity: "v:left"}
	batch, rest = takeBatch([]*enterReq{a, left, a2, b})
	if len(batch) != 2 || batch[0] != a || batch[1] != b || len(rest) != 1 || rest[0] != a2 {
		t.Fatalf("batch %v rest %v: want a and b now, a's second enter next, the caller that left nowhere", batch, rest)
	}
}
