package redisstore

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/queue"
)

// clocks is what this server last saw of Redis's data, in memory: the
// data epoch's id, its clock (the highest value of the deployment's clock
// key this server read), and each room's clock with the room's life (a room
// deleted and made again starts a new life, whose clock starts again). Every
// server advances the clocks, so data restored from an older snapshot (or a
// lagging replica promoted) shows a clock at or below one seen before.
type clocks struct {
	mu     sync.Mutex
	id     string
	seen   int64
	rooms  map[string]roomClock
	behind bool // a room's clock went back: the next Epoch starts a new one
}

type roomClock struct {
	life string
	seen int64
}

func (s *Store) clockKey() string { return s.prefix + "epoch:clock" }

// Epoch reads the data epoch, advancing the deployment's clock. When the
// clock is not past what this server saw before under the same epoch, or a
// room's clock went back since the last call, Redis serves older data than
// this server saw: a new epoch starts (renew.lua), so every server treats
// it as a data loss (queue.Admitter).
func (s *Store) Epoch(ctx context.Context) (queue.Epoch, error) {
	key := s.epochKey()
	var id *redis.StringCmd
	var n *redis.IntCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SetNX(ctx, key, queue.RandomID(), 0)
		id = p.Get(ctx, key)
		n = p.Incr(ctx, s.clockKey())
		return nil
	})
	if err != nil {
		return queue.Epoch{}, fail("epoch", err)
	}
	e := queue.Epoch{ID: id.Val()}
	c := &s.clocks
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id == e.ID && (n.Val() <= c.seen || c.behind) {
		// Older than seen: a new epoch, unless another server started one
		// (then that one reports it).
		mine := queue.RandomID()
		next, err := s.call(ctx, renewArgs{Epoch: key, Stale: e.ID, Next: mine}).Text()
		if err != nil {
			return queue.Epoch{}, fail("epoch: renew", err)
		}
		e.ID, e.Rewound = next, next == mine
		e.Clock, e.Seen = n.Val(), c.seen
	}
	if c.id != e.ID {
		c.rooms = nil // a new epoch: each room's clock is read afresh
	}
	c.id, c.seen, c.behind = e.ID, n.Val(), false
	return e, nil
}

// advanceRoom moves room's clock on after a tick and notes when it is not
// past the one this server saw: data older than seen (clocks.behind).
func (s *Store) advanceRoom(ctx context.Context, room string) {
	k := keysFor(s.prefix, room)
	var life *redis.StringCmd
	var n *redis.IntCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSetNX(ctx, k.stats, "life", queue.RandomID())
		life = p.HGet(ctx, k.stats, "life")
		n = p.HIncrBy(ctx, k.stats, "clock", 1)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return
	}
	c := &s.clocks
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rooms == nil {
		c.rooms = map[string]roomClock{}
	}
	was, ok := c.rooms[room]
	if ok && was.life == life.Val() && n.Val() <= was.seen {
		c.behind = true
	}
	c.rooms[room] = roomClock{life: life.Val(), seen: n.Val()}
}
