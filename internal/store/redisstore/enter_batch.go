package redisstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// maxEnterBatch bounds the enters of one enter.lua call: ~1,150 arguments,
// well under a millisecond of Redis time.
const maxEnterBatch = 64

// enterBatches sends a room's enters one call at a time, each call with
// every enter that arrived while the one before was in flight (group
// commit). A lone enter goes at once; under a crowd, a call carries many,
// and they share the room's reads and writes (lua/enter.lua): that is what
// lets one shard take a crowd's enters.
type enterBatches struct {
	mu    sync.Mutex
	rooms map[string][]*enterReq // room -> enters waiting for the call in flight; present while one is
	calls atomic.Uint64          // calls made, for tests
}

type enterReq struct {
	ctx      context.Context // the caller's: one that gave up before its call is left out
	identity string
	args     enterOne
	done     chan enterRes // buffered: a caller that gave up leaves its result there
}

type enterRes struct {
	reply []any // enter.lua's 5 values for this enter
	err   error
}

// enter runs one enter: in the next call for its room, or in a call of its
// own when none is in flight.
func (s *Store) enter(ctx context.Context, room, base string, args enterOne) ([]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req := &enterReq{ctx: ctx, identity: args.Identity, args: args, done: make(chan enterRes, 1)}
	b := &s.batches
	b.mu.Lock()
	if b.rooms == nil {
		b.rooms = map[string][]*enterReq{}
	}
	if q, busy := b.rooms[room]; busy {
		b.rooms[room] = append(q, req)
		b.mu.Unlock()
	} else {
		b.rooms[room] = nil
		b.mu.Unlock()
		s.sendEnters(context.WithoutCancel(ctx), room, base, []*enterReq{req})
	}
	select {
	case r := <-req.done:
		return r.reply, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sendEnters makes one call for batch, hands each enter its reply, and
// passes the room on to the enters that came meanwhile: in a goroutine of
// their own, so that this call's caller returns now. The calls are not
// bound to any one caller's context: a caller that gives up does not fail
// the others (the client's timeouts bound the call).
func (s *Store) sendEnters(ctx context.Context, room, base string, batch []*enterReq) {
	a := enterArgs{Base: base, Enters: make([]enterOne, len(batch))}
	for i, r := range batch {
		a.Enters[i] = r.args
	}
	s.batches.calls.Add(1)
	res, err := s.call(ctx, a).Slice()
	if err == nil && len(res) != 5*len(batch) {
		err = fmt.Errorf("%d values for %d enters", len(res), len(batch)) // Store.Enter names it
	}
	for i, r := range batch {
		if err != nil {
			r.done <- enterRes{err: err}
		} else {
			r.done <- enterRes{reply: res[5*i : 5*i+5]}
		}
	}

	b := &s.batches
	b.mu.Lock()
	next, rest := takeBatch(b.rooms[room])
	if len(next) == 0 {
		delete(b.rooms, room)
		b.mu.Unlock()
		return
	}
	b.rooms[room] = rest
	b.mu.Unlock()
	go s.sendEnters(ctx, room, base, next)
}

// takeBatch takes the next call's enters from the waiting ones, in their
// order, at most maxEnterBatch and no identity twice: a second enter of an
// identity waits for the next call, which sees the first one's ticket. An
// enter whose caller gave up is dropped.
func takeBatch(waiting []*enterReq) (batch, rest []*enterReq) {
	seen := make(map[string]struct{}, min(len(waiting), maxEnterBatch))
	for _, r := range waiting {
		if r.ctx.Err() != nil {
			continue
		}
		if _, dup := seen[r.identity]; dup || len(batch) == maxEnterBatch {
			rest = append(rest, r)
			continue
		}
		seen[r.identity] = struct{}{}
		batch = append(batch, r)
	}
	return batch, rest
}
