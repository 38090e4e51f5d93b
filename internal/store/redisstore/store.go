// Package redisstore is the line's Redis adapter: keys, one Lua script per
// operation (lua/), pub/sub, the availability hook and fail-fast client
// options. It translates Redis errors into the core's (queue.ErrUnavailable,
// queue.ErrRoomNotFound, …), so no Redis error reaches HTTP code.
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// Store keeps the line in Redis. It takes a UniversalClient so a single
// server, Sentinel and Cluster deployments all work.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	rate   *redis_rate.Limiter // per-client enter limits (limits.go)
	fns    functions           // whether Redis runs the scripts as functions (functions.go)
	// batches groups each room's enters into calls (enter_batch.go).
	batches enterBatches
	// clocks is what this server saw of the data's age (epoch.go).
	clocks clocks
}

var _ queue.Store = (*Store)(nil)

// New returns a store whose keys all start with prefix (vocab.KeyPrefix).
func New(rdb redis.UniversalClient, prefix string) *Store {
	return &Store{rdb: rdb, prefix: prefix, rate: redis_rate.NewLimiter(rdb)}
}

func (s *Store) PutRoom(ctx context.Context, room string, st queue.Settings) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fail("encode settings", err)
	}
	if err := s.rdb.Set(ctx, keysFor(s.prefix, room).settings, data, 0).Err(); err != nil {
		return fail("put room", err)
	}
	if err := s.rdb.SAdd(ctx, s.roomsKey(), room).Err(); err != nil {
		return fail("put room", err)
	}
	// Open pages learn of the change (pause, title) without waiting for their tier.
	if err := s.rdb.Publish(ctx, keysFor(s.prefix, room).events, roomChanged).Err(); err != nil {
		return fail("put room: announce", err)
	}
	return nil
}

func (s *Store) RestoreRoom(ctx context.Context, room string, st queue.Settings, now time.Time) (bool, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return false, fail("encode settings", err)
	}
	k := keysFor(s.prefix, room)
	// Listed first, as before the room's keys: the rooms set is in another
	// Redis Cluster slot than the room, so one script cannot do both.
	if err := s.rdb.SAdd(ctx, s.roomsKey(), room).Err(); err != nil {
		return false, fail("restore room", err)
	}
	hold := now.Add(time.Duration(st.JitterMS)*time.Millisecond + time.Duration(st.SessionTTLS)*time.Second)
	n, err := s.call(ctx, restoreArgs{SettingsKey: k.settings, Budget: k.budget,
		Settings: string(data), Capacity: st.Capacity, HoldUntil: ms(hold)}).Int()
	if err != nil {
		return false, fail("restore room", err)
	}
	return n == 1, nil
}

func (s *Store) GetRoom(ctx context.Context, room string) (queue.Settings, error) {
	data, err := s.rdb.Get(ctx, keysFor(s.prefix, room).settings).Bytes()
	if errors.Is(err, redis.Nil) {
		return queue.Settings{}, queue.ErrRoomNotFound
	}
	if err != nil {
		return queue.Settings{}, fail("get room", err)
	}
	st := queue.DefaultSettings()
	if err := json.Unmarshal(data, &st); err != nil {
		return queue.Settings{}, fail("decode settings of "+room, err)
	}
	return st, nil
}

func (s *Store) DeleteRoom(ctx context.Context, room string) error {
	k := keysFor(s.prefix, room)
	// The buckets' names follow from the seq and the visitors bucket count,
	// read before those keys go.
	seq, err := s.rdb.Get(ctx, k.seq).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fail("delete room", err)
	}
	vb, err := s.rdb.HGet(ctx, k.stats, "vb").Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fail("delete room", err)
	}
	servers, err := s.rdb.HKeys(ctx, k.present).Result()
	if err != nil {
		return fail("delete room", err)
	}
	var n int64
	keys := append(k.all(), k.buckets(seq, vb)...)
	for _, server := range servers {
		keys = append(keys, k.bits(server))
	}
	for i := 0; i < len(keys); i += deleteChunk {
		d, err := s.rdb.Del(ctx, keys[i:min(i+deleteChunk, len(keys))]...).Result()
		if err != nil {
			return fail("delete room", err)
		}
		n += d
	}
	removed, err := s.rdb.SRem(ctx, s.roomsKey(), room).Result()
	if err != nil {
		return fail("delete room", err)
	}
	if n == 0 && removed == 0 {
		return queue.ErrRoomNotFound
	}
	return nil
}

// deleteChunk bounds one DEL of DeleteRoom.
const deleteChunk = 1000

func (s *Store) ListRooms(ctx context.Context) ([]string, error) {
	rooms, err := s.rdb.SMembers(ctx, s.roomsKey()).Result()
	if err != nil {
		return nil, fail("list rooms", err)
	}
	sort.Strings(rooms)
	return rooms, nil
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func (s *Store) Enter(ctx context.Context, room string, st *queue.Settings, mode queue.Admission, identity, newID string, now time.Time, jitter time.Duration, gate queue.EntryProof) (queue.Ticket, error) {
	k := keysFor(s.prefix, room)
	tail, packed := newTail(newID), packIdentity(identity)
	one := enterOne{
		Identity: identity, Tail: tail, Now: ms(now), Mode: string(mode),
		Capacity: st.Capacity, BatchSize: st.BatchSize, Interval: st.BatchIntervalMS,
		Orderable: ms(now.Add(jitter)), TTL: st.SessionTTLS * 1000, Window: max(st.ArrivalWindowS, 0) * 1000,
		Proof: gate.Mode(), MaxWaiting: st.MaxWaiting,
		Packed: packed, Field: visitorField(packed), Now36: stamp36(ms(now)), TailBytes: tailBytes(tail),
		Network: gate.Network, Unarrived: queue.UnarrivedLimit(st),
	}
	if one.Proof == queue.ProofSpend {
		one.ProofTTL, one.ProofID = max(gate.Expires.Sub(now).Milliseconds(), 1), gate.ID
	}
	res, err := s.enter(ctx, room, k.base, one)
	if err != nil {
		return queue.Ticket{}, fail("enter", err)
	}
	id, _ := res[0].(string)
	if id == "" {
		return enterRefusal(room, toInt(res[2]))
	}
	return decodeTicket(room, id, res[1], res[2], res[3], res[4], now)
}

func (s *Store) Status(ctx context.Context, room string, _ *queue.Settings, id, identity string, now time.Time) (queue.Ticket, error) {
	k := keysFor(s.prefix, room)
	res, err := s.call(ctx, statusArgs{Tickets: k.tickets, Q: k.q, Seen: k.seen, Stats: k.stats, Base: k.base,
		ID: id, Identity: identity, Now: ms(now), Packed: packIdentity(identity)}).Slice()
	if errors.Is(err, redis.Nil) {
		return queue.Ticket{}, queue.ErrTicketNotFound
	}
	if err != nil {
		return queue.Ticket{}, fail("status", err)
	}
	t, err := decodeStatus(room, id, res, now)
	t.Score = statusScore(res)
	return t, err
}

// statusScore is a waiter's score from status.lua's answer, for its local
// position (queue.Positions); NaN when the ticket is not in the line. A
// score never changes while the ticket waits.
func statusScore(res []any) float64 {
	if len(res) == 5 && res[4] != nil {
		if f, err := strconv.ParseFloat(fmt.Sprint(res[4]), 64); err == nil {
			return f
		}
	}
	return math.NaN()
}

func (s *Store) StatusMany(ctx context.Context, room string, _ *queue.Settings, ids []string, now time.Time) ([]queue.Ticket, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	k := keysFor(s.prefix, room)
	// Make sure the script is cached so the pipeline's EVALSHAs all hit.
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			keys, argv := marshal(statusArgs{Tickets: k.tickets, Q: k.q, Seen: k.seen, Stats: k.stats, Base: k.base,
				ID: id, Now: ms(now)})
			statusScript.EvalSha(ctx, p, keys, argv...)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		if !isNoScript(err) {
			return nil, fail("status many", err)
		}
		if err := statusScript.Load(ctx, s.rdb).Err(); err != nil {
			return nil, fail("status many: load script", err)
		}
		return s.StatusMany(ctx, room, nil, ids, now)
	}
	out := make([]queue.Ticket, len(ids))
	for i, c := range cmds {
		res, err := c.(*redis.Cmd).Slice()
		if errors.Is(err, redis.Nil) {
			out[i] = queue.Ticket{Room: room, ID: ids[i], State: vocab.StateExpired, Reason: "unknown"}
			continue
		}
		if err != nil {
			return nil, fail("status many", err)
		}
		if out[i], err = decodeStatus(room, ids[i], res, now); err != nil {
			return nil, err
		}
		out[i].Score = statusScore(res)
	}
	return out, nil
}

func isNoScript(err error) bool {
	return err != nil && len(err.Error()) >= 8 && err.Error()[:8] == "NOSCRIPT"
}

func (s *Store) Leave(ctx context.Context, room, id, identity string, now time.Time) error {
	k := keysFor(s.prefix, room)
	n, err := s.call(ctx, leaveArgs{Tickets: k.tickets, Q: k.q, Seen: k.seen, Active: k.active, Ended: k.ended,
		Pre: k.pre, Stats: k.stats, Log: k.log, Base: k.base,
		ID: id, Identity: identity, Now: ms(now), Packed: packIdentity(identity)}).Int()
	if err != nil {
		return fail("leave", err)
	}
	if n == 0 {
		return queue.ErrTicketNotFound
	}
	return nil
}

func (s *Store) Complete(ctx context.Context, room, id string, now time.Time) error {
	k := keysFor(s.prefix, room)
	n, err := s.call(ctx, completeArgs{Tickets: k.tickets, Active: k.active, Stats: k.stats, Ended: k.ended, Base: k.base,
		ID: id, Now: ms(now)}).Int()
	if err != nil {
		return fail("complete", err)
	}
	if n == 0 {
		return queue.ErrTicketNotFound
	}
	return nil
}

func (s *Store) Active(ctx context.Context, room, id string, now time.Time) (bool, string, error) {
	k := keysFor(s.prefix, room)
	res, err := s.call(ctx, activeArgs{Active: k.active, Tickets: k.tickets, Base: k.base, ID: id, Now: ms(now)}).Slice()
	if err != nil {
		return false, "", fail("active", err)
	}
	if len(res) != 2 {
		return false, "", fmt.Errorf("redisstore: active: unexpected reply %v", res)
	}
	ok, _ := res[0].(int64)
	reason, _ := res[1].(string)
	return ok == 1, reason, nil
}

// Arrive runs arrive.lua: Active, marking the visitor arrived and moving
// the slot's idle deadline.
func (s *Store) Arrive(ctx context.Context, room, id string, now time.Time, idle time.Duration) (bool, string, error) {
	k := keysFor(s.prefix, room)
	res, err := s.call(ctx, arriveArgs{Active: k.active, Tickets: k.tickets, Base: k.base,
		ID: id, Now: ms(now), Idle: max(idle.Milliseconds(), 0), Step: queue.IdleStep}).Slice()
	if err != nil {
		return false, "", fail("arrive", err)
	}
	if len(res) != 2 {
		return false, "", fmt.Errorf("redisstore: arrive: unexpected reply %v", res)
	}
	ok, _ := res[0].(int64)
	reason, _ := res[1].(string)
	return ok == 1, reason, nil
}

func (s *Store) Tick(ctx context.Context, room string, st *queue.Settings, now time.Time, jitters []time.Duration, draws []uint64) (queue.TickResult, error) {
	k := keysFor(s.prefix, room)
	a := tickArgs{
		Q: k.q, Seen: k.seen, Active: k.active, Tickets: k.tickets, Budget: k.budget, Stats: k.stats,
		Admits: k.admits, Ended: k.ended, Visitors: k.visitors, Log: k.log, Base: k.base, Present: k.present,
		Now: ms(now), Interval: st.BatchIntervalMS, BatchSize: st.BatchSize, Capacity: st.Capacity,
		AbandonBefore: ms(now) - st.AbandonAfterS*1000,
		Paused:        st.Paused, // activation "off" still drains the waiters from before at the pace
		TTL:           st.SessionTTLS * 1000, MaxScan: queue.MaxScan,
		Rate: strconv.FormatFloat(st.ConfiguredRate(), 'f', 3, 64), Channel: k.events,
		PurgeBefore: ms(now.Add(-queue.EndedKept)),
		Window:      st.ArrivalWindowS * 1000, // negative: lapse nobody early (queue.HoldLapses)
		Unarrived:   queue.UnarrivedLimit(st),
		Jitters:     make([]int64, max(st.BatchSize, 0)),
	}
	for i := range a.Jitters {
		if i < len(jitters) {
			a.Jitters[i] = jitters[i].Milliseconds()
		}
	}
	if len(draws) > 0 {
		a.Draws = make([]string, max(st.BatchSize, 0))
		for i := range a.Draws {
			var d uint64
			if i < len(draws) {
				d = draws[i] % queue.DrawRange
			}
			a.Draws[i] = strconv.FormatUint(d, 10)
		}
	}
	res, err := s.call(ctx, a).Slice()
	if err != nil {
		return queue.TickResult{}, fail("tick "+room, err)
	}
	if len(res) < 5 {
		return queue.TickResult{}, fmt.Errorf("redisstore: tick %s: unexpected reply %v", room, res)
	}
	// After the tick: a tick's admissions are on a clock this server read,
	// so a snapshot taken before them shows as older at the next tick.
	// The tick happened: a failure here is the next call's to report.
	s.advanceRoom(ctx, room)
	r := queue.TickResult{Reclaimed: toInt(res[0]), Abandoned: toInt(res[1]), Purged: toInt(res[2]), NoShows: toInt(res[3]), Idle: toInt(res[4])}
	for i := 5; i+1 < len(res); i += 2 {
		if id, ok := res[i].(string); ok {
			r.Admitted = append(r.Admitted, id)
			r.Waits = append(r.Waits, time.Duration(toInt(res[i+1]))*time.Millisecond)
		}
	}
	return r, nil
}

func (s *Store) Stats(ctx context.Context, room string, now time.Time) (queue.Stats, error) {
	k := keysFor(s.prefix, room)
	var waiting, scheduled, active *redis.IntCmd
	var counters *redis.MapStringStringCmd
	var hold *redis.SliceCmd
	var seq *redis.StringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		waiting = p.ZCard(ctx, k.q)
		scheduled = p.ZCard(ctx, k.pre)
		active = p.ZCount(ctx, k.active, "("+strconv.FormatInt(ms(now), 10), "+inf")
		counters = p.HGetAll(ctx, k.stats)
		hold = p.HMGet(ctx, k.budget, "h", "hu") // restore.lua
		seq = p.Get(ctx, k.seq)                  // every ticket entered took one; last: a new room has none (redis.Nil)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return queue.Stats{}, fail("stats", err)
	}
	c := counters.Val()
	num := func(f string) int64 { n, _ := strconv.ParseInt(c[f], 10, 64); return n }
	// What was admitted over the last minute, not the configured pace:
	// 0 after a Redis restart until someone is admitted again.
	rate, _ := strconv.ParseFloat(c["measured"], 64)
	entered, _ := strconv.ParseInt(seq.Val(), 10, 64)
	var held int64
	if h := hold.Val(); len(h) == 2 {
		n, _ := h[0].(string)
		until, _ := h[1].(string)
		if u, _ := strconv.ParseInt(until, 10, 64); ms(now) < u {
			held, _ = strconv.ParseInt(n, 10, 64)
		}
	}
	return queue.Stats{
		Waiting:        waiting.Val(),
		Scheduled:      scheduled.Val(),
		Active:         active.Val() + held,
		Held:           held,
		EnteredTotal:   entered,
		AdmittedTotal:  num("admitted_total"),
		AbandonedTotal: num("abandoned_total"),
		ExpiredTotal:   num("expired_total"),
		CompletedTotal: num("completed_total"),
		NoShowTotal:    num("no_show_total"),
		IdleTotal:      num("idle_total"),
		AdmittedRate:   rate,
	}, nil
}
