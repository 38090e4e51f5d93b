package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// maxScan bounds each kind of removal one tick makes (ended tickets purged,
// expired slots reclaimed, abandoned waiters dropped, ghosts popped at the
// head), so a tick stays short however many ghosts piled up.
const maxScan = 500

// EndedKept is how long an ended ticket (completed, left, abandoned or
// reclaimed) stays in Redis so its owner can still read why it ended; then
// a tick deletes it, and its visitor's entry, so the line's memory follows
// the live tickets, not every ticket there ever was.
const EndedKept = 5 * time.Minute

// RedisStore keeps the line in Redis. It takes a UniversalClient so a single
// server, Sentinel and Cluster deployments all work.
type RedisStore struct {
	rdb    redis.UniversalClient
	prefix string
	rate   *redis_rate.Limiter // per-client enter limits (limits.go)
}

var _ Store = (*RedisStore)(nil)

// NewRedisStore returns a store whose keys all start with prefix (e.g. "wr:").
func NewRedisStore(rdb redis.UniversalClient, prefix string) *RedisStore {
	return &RedisStore{rdb: rdb, prefix: prefix, rate: redis_rate.NewLimiter(rdb)}
}

// EventsPattern is the pub/sub pattern on which ticks announce admissions.
func (s *RedisStore) EventsPattern() string { return s.prefix + "{*}:events" }

// RoomFromChannel returns the room of an events channel.
func (s *RedisStore) RoomFromChannel(ch string) (string, bool) {
	n := len(s.prefix)
	if len(ch) < n+len("{}:events") || ch[:n] != s.prefix || ch[n] != '{' {
		return "", false
	}
	rest := ch[n+1:]
	end := len(rest) - len("}:events")
	if end <= 0 || rest[end:] != "}:events" {
		return "", false
	}
	return rest[:end], true
}

func (s *RedisStore) roomsKey() string { return s.prefix + "rooms" }

func (s *RedisStore) PutRoom(ctx context.Context, room string, st Settings) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("queue: encode settings: %w", err)
	}
	if err := s.rdb.Set(ctx, keysFor(s.prefix, room).settings, data, 0).Err(); err != nil {
		return fmt.Errorf("queue: put room: %w", err)
	}
	if err := s.rdb.SAdd(ctx, s.roomsKey(), room).Err(); err != nil {
		return fmt.Errorf("queue: put room: %w", err)
	}
	// Open pages learn of the change (pause, title) without waiting for their tier.
	if err := s.rdb.Publish(ctx, keysFor(s.prefix, room).events, roomChanged).Err(); err != nil {
		return fmt.Errorf("queue: put room: announce: %w", err)
	}
	return nil
}

func (s *RedisStore) Epoch(ctx context.Context) (string, error) {
	key := s.prefix + "epoch"
	if err := s.rdb.SetNX(ctx, key, RandomID(), 0).Err(); err != nil {
		return "", fmt.Errorf("queue: epoch: %w", err)
	}
	e, err := s.rdb.Get(ctx, key).Result()
	if err != nil {
		return "", fmt.Errorf("queue: epoch: %w", err)
	}
	return e, nil
}

func (s *RedisStore) RestoreRoom(ctx context.Context, room string, st Settings, now time.Time) (bool, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return false, fmt.Errorf("queue: encode settings: %w", err)
	}
	k := keysFor(s.prefix, room)
	// Listed first, as before the room's keys: the rooms set is in another
	// Redis Cluster slot than the room, so one script cannot do both.
	if err := s.rdb.SAdd(ctx, s.roomsKey(), room).Err(); err != nil {
		return false, fmt.Errorf("queue: restore room: %w", err)
	}
	hold := now.Add(time.Duration(st.JitterMS)*time.Millisecond + time.Duration(st.SessionTTLS)*time.Second)
	n, err := restoreScript.Run(ctx, s.rdb, []string{k.settings, k.active},
		data, st.Capacity, ms(hold)).Int()
	if err != nil {
		return false, fmt.Errorf("queue: restore room: %w", err)
	}
	return n == 1, nil
}

func (s *RedisStore) GetRoom(ctx context.Context, room string) (Settings, error) {
	data, err := s.rdb.Get(ctx, keysFor(s.prefix, room).settings).Bytes()
	if errors.Is(err, redis.Nil) {
		return Settings{}, ErrRoomNotFound
	}
	if err != nil {
		return Settings{}, fmt.Errorf("queue: get room: %w", err)
	}
	st := DefaultSettings()
	if err := json.Unmarshal(data, &st); err != nil {
		return Settings{}, fmt.Errorf("queue: decode settings of %s: %w", room, err)
	}
	return st, nil
}

func (s *RedisStore) DeleteRoom(ctx context.Context, room string) error {
	n, err := s.rdb.Del(ctx, keysFor(s.prefix, room).all()...).Result()
	if err != nil {
		return fmt.Errorf("queue: delete room: %w", err)
	}
	removed, err := s.rdb.SRem(ctx, s.roomsKey(), room).Result()
	if err != nil {
		return fmt.Errorf("queue: delete room: %w", err)
	}
	if n == 0 && removed == 0 {
		return ErrRoomNotFound
	}
	return nil
}

func (s *RedisStore) ListRooms(ctx context.Context) ([]string, error) {
	rooms, err := s.rdb.SMembers(ctx, s.roomsKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("queue: list rooms: %w", err)
	}
	sort.Strings(rooms)
	return rooms, nil
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func (s *RedisStore) Enter(ctx context.Context, room string, st *Settings, lineClosed bool, identity, newID string, now time.Time, jitter time.Duration, gate EntryProof) (Ticket, error) {
	k := keysFor(s.prefix, room)
	mode := "line"
	switch {
	case st.Closed(now):
		mode = "closed"
	case st.Activation == ActivationOff:
		mode = "open"
	case lineClosed:
		mode = "open_if_empty"
	case st.Paused:
		mode = "paused"
	}
	res, err := enterScript.Run(ctx, s.rdb,
		[]string{k.visitors, k.tickets, k.seq, k.q, k.seen, k.active, k.budget, k.stats, k.admits, k.pow(gate.ID)},
		identity, newID, ms(now), mode, st.Capacity, st.BatchSize, st.BatchIntervalMS,
		ms(now.Add(jitter)), st.SessionTTLS*1000, gate.mode(), max(gate.Expires.Sub(now).Milliseconds(), 1),
	).Slice()
	if err != nil {
		return Ticket{}, fmt.Errorf("queue: enter: %w", err)
	}
	if len(res) != 5 {
		return Ticket{}, fmt.Errorf("queue: enter: unexpected reply %v", res)
	}
	id, _ := res[0].(string)
	if id == "" {
		switch toInt(res[2]) {
		case -2:
			return Ticket{}, ErrProofRequired
		case -3:
			return Ticket{}, ErrProofSpent
		}
		return Ticket{Room: room, State: StateClosed}, nil
	}
	return decodeTicket(room, id, res[1], res[2], res[3], res[4], now)
}

func (s *RedisStore) Status(ctx context.Context, room string, _ *Settings, id, identity string, now time.Time) (Ticket, error) {
	k := keysFor(s.prefix, room)
	res, err := statusScript.Run(ctx, s.rdb, []string{k.tickets, k.q, k.seen, k.stats}, id, identity, ms(now)).Slice()
	if errors.Is(err, redis.Nil) {
		return Ticket{}, ErrTicketNotFound
	}
	if err != nil {
		return Ticket{}, fmt.Errorf("queue: status: %w", err)
	}
	return decodeStatus(room, id, res, now)
}

func (s *RedisStore) StatusMany(ctx context.Context, room string, _ *Settings, ids []string, now time.Time) ([]Ticket, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	k := keysFor(s.prefix, room)
	keys := []string{k.tickets, k.q, k.seen, k.stats}
	// Make sure the script is cached so the pipeline's EVALSHAs all hit.
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			statusScript.EvalSha(ctx, p, keys, id, "", ms(now))
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		if !isNoScript(err) {
			return nil, fmt.Errorf("queue: status many: %w", err)
		}
		if err := statusScript.Load(ctx, s.rdb).Err(); err != nil {
			return nil, fmt.Errorf("queue: status many: load script: %w", err)
		}
		return s.StatusMany(ctx, room, nil, ids, now)
	}
	out := make([]Ticket, len(ids))
	for i, c := range cmds {
		res, err := c.(*redis.Cmd).Slice()
		if errors.Is(err, redis.Nil) {
			out[i] = Ticket{Room: room, ID: ids[i], State: StateExpired, Reason: "unknown"}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("queue: status many: %w", err)
		}
		if out[i], err = decodeStatus(room, ids[i], res, now); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func isNoScript(err error) bool {
	return err != nil && len(err.Error()) >= 8 && err.Error()[:8] == "NOSCRIPT"
}

func (s *RedisStore) Leave(ctx context.Context, room, id, identity string, now time.Time) error {
	k := keysFor(s.prefix, room)
	n, err := leaveScript.Run(ctx, s.rdb, []string{k.tickets, k.q, k.seen, k.active, k.ended}, id, identity, ms(now)).Int()
	if err != nil {
		return fmt.Errorf("queue: leave: %w", err)
	}
	if n == 0 {
		return ErrTicketNotFound
	}
	return nil
}

func (s *RedisStore) Complete(ctx context.Context, room, id string, now time.Time) error {
	k := keysFor(s.prefix, room)
	n, err := completeScript.Run(ctx, s.rdb, []string{k.tickets, k.active, k.stats, k.ended}, id, ms(now)).Int()
	if err != nil {
		return fmt.Errorf("queue: complete: %w", err)
	}
	if n == 0 {
		return ErrTicketNotFound
	}
	return nil
}

func (s *RedisStore) Active(ctx context.Context, room, id string, now time.Time) (bool, string, error) {
	k := keysFor(s.prefix, room)
	res, err := activeScript.Run(ctx, s.rdb, []string{k.active, k.tickets}, id, ms(now)).Slice()
	if err != nil {
		return false, "", fmt.Errorf("queue: active: %w", err)
	}
	if len(res) != 2 {
		return false, "", fmt.Errorf("queue: active: unexpected reply %v", res)
	}
	ok, _ := res[0].(int64)
	reason, _ := res[1].(string)
	return ok == 1, reason, nil
}

func (s *RedisStore) Tick(ctx context.Context, room string, st *Settings, now time.Time, jitters []time.Duration) (TickResult, error) {
	k := keysFor(s.prefix, room)
	paused := "0"
	if st.Paused {
		paused = "1" // activation "off" still drains the waiters from before at the pace
	}
	args := []any{
		ms(now), st.BatchIntervalMS, st.BatchSize, st.Capacity,
		ms(now) - st.AbandonAfterS*1000, paused, st.SessionTTLS * 1000, maxScan,
		strconv.FormatFloat(st.ConfiguredRate(), 'f', 3, 64), k.events, ms(now.Add(-EndedKept)),
	}
	for i := int64(0); i < st.BatchSize; i++ {
		var j time.Duration
		if int(i) < len(jitters) {
			j = jitters[i]
		}
		args = append(args, j.Milliseconds())
	}
	res, err := tickScript.Run(ctx, s.rdb,
		[]string{k.q, k.seen, k.active, k.tickets, k.budget, k.stats, k.admits, k.ended, k.visitors}, args...).Slice()
	if err != nil {
		return TickResult{}, fmt.Errorf("queue: tick %s: %w", room, err)
	}
	if len(res) < 3 {
		return TickResult{}, fmt.Errorf("queue: tick %s: unexpected reply %v", room, res)
	}
	r := TickResult{Reclaimed: toInt(res[0]), Abandoned: toInt(res[1]), Purged: toInt(res[2])}
	for i := 3; i+1 < len(res); i += 2 {
		if id, ok := res[i].(string); ok {
			r.Admitted = append(r.Admitted, id)
			r.Waits = append(r.Waits, time.Duration(toInt(res[i+1]))*time.Millisecond)
		}
	}
	return r, nil
}

func (s *RedisStore) Stats(ctx context.Context, room string, now time.Time) (Stats, error) {
	k := keysFor(s.prefix, room)
	var waiting, active *redis.IntCmd
	var counters *redis.MapStringStringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		waiting = p.ZCard(ctx, k.q)
		active = p.ZCount(ctx, k.active, "("+strconv.FormatInt(ms(now), 10), "+inf")
		counters = p.HGetAll(ctx, k.stats)
		return nil
	})
	if err != nil {
		return Stats{}, fmt.Errorf("queue: stats: %w", err)
	}
	c := counters.Val()
	num := func(f string) int64 { n, _ := strconv.ParseInt(c[f], 10, 64); return n }
	rate, _ := strconv.ParseFloat(c["rate"], 64)
	return Stats{
		Waiting:        waiting.Val(),
		Active:         active.Val(),
		EnteredTotal:   num("entered_total"),
		AdmittedTotal:  num("admitted_total"),
		AbandonedTotal: num("abandoned_total"),
		ExpiredTotal:   num("expired_total"),
		CompletedTotal: num("completed_total"),
		AdmittedRate:   rate,
	}, nil
}

// record is a ticket as the scripts keep it (short names keep Redis small).
// Numbers are float64 because Lua's cjson may write big integers as 1.7e+12.
type record struct {
	Identity  string  `json:"i"`
	Seq       float64 `json:"s"`
	State     string  `json:"st"`
	Reason    string  `json:"r"`
	Entered   float64 `json:"e"`
	Admitted  float64 `json:"a"`
	Orderable float64 `json:"o"`
	Expires   float64 `json:"x"`
	EntryPos  float64 `json:"p"`
}

func decodeStatus(room, id string, res []any, now time.Time) (Ticket, error) {
	if len(res) != 4 {
		return Ticket{}, fmt.Errorf("queue: status: unexpected reply %v", res)
	}
	return decodeTicket(room, id, res[0], res[1], res[2], res[3], now)
}

func decodeTicket(room, id string, raw, rank, waiting, rate any, now time.Time) (Ticket, error) {
	s, _ := raw.(string)
	var rec record
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return Ticket{}, fmt.Errorf("queue: decode ticket %s: %w", id, err)
	}
	t := Ticket{
		Room: room, ID: id, Identity: rec.Identity, State: rec.State, Reason: rec.Reason,
		Seq: int64(rec.Seq), EntryPosition: int64(rec.EntryPos), Waiting: toInt(waiting), EnteredAt: time.UnixMilli(int64(rec.Entered)),
	}
	if r, ok := rate.(string); ok {
		t.Rate, _ = strconv.ParseFloat(r, 64)
	}
	if r := toInt(rank); t.State == StateWaiting && r >= 0 {
		t.Position = r + 1
	}
	if rec.Admitted > 0 {
		t.AdmittedAt = time.UnixMilli(int64(rec.Admitted))
		t.OrderableAt = time.UnixMilli(int64(rec.Orderable))
		t.ExpiresAt = time.UnixMilli(int64(rec.Expires))
	}
	if t.State == StateAdmitted && !now.Before(t.ExpiresAt) {
		t.State, t.Reason = StateExpired, "reclaimed"
	}
	if t.State == StateWaiting && t.Position == 0 {
		// Dropped between the record write and the read: treat as gone.
		t.State, t.Reason = StateExpired, "abandoned"
	}
	return t, nil
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}

// roomChanged is the event payload that says a room's settings changed.
const roomChanged = "*settings"

// Listen delivers this deployment's room events until ctx ends: the tickets
// an admission tick let in (from whichever server ran it) and settings
// changes. It reconnects by itself when Redis comes back.
func (s *RedisStore) Listen(ctx context.Context, onAdmit func(room string, ids []string), onRoom func(room string)) error {
	sub := s.rdb.PSubscribe(ctx, s.EventsPattern())
	defer sub.Close()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return nil
			}
			room, ok := s.RoomFromChannel(m.Channel)
			if !ok {
				continue
			}
			if m.Payload == roomChanged {
				onRoom(room)
				continue
			}
			onAdmit(room, strings.Split(m.Payload, ","))
		}
	}
}

func (s *RedisStore) drillKey() string { return s.prefix + "drill" }

// Probe writes a small key and reads the deployment's degraded-mode drill:
// "on", or absent for automatic (an "off" left by an older server is
// automatic too). It is the availability flag's probe; it writes so that a
// Redis refusing writes for memory does not look recovered because reads
// still work.
func (s *RedisStore) Probe(ctx context.Context) (*bool, error) {
	if err := s.rdb.Set(ctx, s.prefix+"alive", "1", 10*time.Second).Err(); err != nil {
		return nil, err
	}
	v, err := s.rdb.Get(ctx, s.drillKey()).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if v != "on" {
		return nil, nil
	}
	on := true
	return &on, nil
}

// SetDrill stores the drill for every server; nil or false returns to automatic.
func (s *RedisStore) SetDrill(ctx context.Context, on *bool) error {
	var err error
	if on != nil && *on {
		err = s.rdb.Set(ctx, s.drillKey(), "on", 0).Err()
	} else {
		err = s.rdb.Del(ctx, s.drillKey()).Err()
	}
	if err != nil {
		return fmt.Errorf("queue: set drill: %w", err)
	}
	return nil
}
