package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/queue"
)

func (s *Store) PreQueue(ctx context.Context, room string) ([]queue.PreQueued, error) {
	k := keysFor(s.prefix, room)
	var ids *redis.StringSliceCmd
	var nets *redis.MapStringStringCmd
	// One transaction (both keys share the room's slot): the networks read
	// are those of the places listed.
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		ids = p.ZRange(ctx, k.pre, 0, -1)
		nets = p.HGetAll(ctx, k.pren)
		return nil
	})
	if err != nil {
		return nil, fail("pre-queue", err)
	}
	out := make([]queue.PreQueued, len(ids.Val()))
	for i, id := range ids.Val() {
		out[i] = queue.PreQueued{ID: id, Network: nets.Val()[id]}
	}
	return out, nil
}

func (s *Store) Draw(ctx context.Context, room string, rec queue.DrawRecord, order []string, now time.Time) (bool, int64, error) {
	k := keysFor(s.prefix, room)
	res, err := s.call(ctx, drawArgs{
		Pre: k.pre, Q: k.q, Seen: k.seen, Tickets: k.tickets, Draw: k.draw, Stats: k.stats, Log: k.log, Base: k.base,
		Opens: ms(rec.OpensAt), Now: ms(now), Server: rec.Server, OrderHash: rec.OrderHash, Channel: k.events,
		MaxMoved: queue.MaxScan, Order: order,
	}).Int64Slice()
	if err != nil {
		return false, 0, fail("draw", err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("redisstore: draw: unexpected reply %v", res)
	}
	if code(res[0]) == codeDrawStale {
		return false, 0, queue.ErrDrawStale
	}
	return res[0] == 1, res[1], nil
}

func (s *Store) LastDraw(ctx context.Context, room string) (queue.DrawRecord, bool, error) {
	h, err := s.rdb.HGetAll(ctx, keysFor(s.prefix, room).draw).Result()
	if errors.Is(err, redis.Nil) || (err == nil && len(h) == 0) {
		return queue.DrawRecord{}, false, nil
	}
	if err != nil {
		return queue.DrawRecord{}, false, fail("last draw", err)
	}
	num := func(f string) int64 { n, _ := strconv.ParseInt(h[f], 10, 64); return n }
	return queue.DrawRecord{
		OpensAt: time.UnixMilli(num("opens")).UTC(), At: time.UnixMilli(num("at")).UTC(),
		Drawn: num("drawn"), Server: h["server"], OrderHash: h["hash"],
	}, true, nil
}
