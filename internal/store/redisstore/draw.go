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

func (s *Store) PreQueue(ctx context.Context, room string) ([]string, error) {
	ids, err := s.rdb.ZRange(ctx, keysFor(s.prefix, room).pre, 0, -1).Result()
	if err != nil {
		return nil, fail("pre-queue", err)
	}
	return ids, nil
}

func (s *Store) Draw(ctx context.Context, room string, rec queue.DrawRecord, order []string, now time.Time) (bool, int64, error) {
	k := keysFor(s.prefix, room)
	args := make([]any, 0, 6+len(order))
	args = append(args, ms(rec.OpensAt), ms(now), rec.Server, rec.OrderHash, k.events, queue.MaxScan)
	for _, id := range order {
		args = append(args, id)
	}
	res, err := s.run(ctx, drawScript, []string{k.pre, k.q, k.seen, k.tickets, k.draw, k.stats, k.log, k.base}, args...).Int64Slice()
	if err != nil {
		return false, 0, fail("draw", err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("redisstore: draw: unexpected reply %v", res)
	}
	if res[0] < 0 {
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
