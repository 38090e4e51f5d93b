package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/queue"
)

// The change log is a stream per room ({room}:log) to which enter.lua,
// tick.lua, leave.lua and draw.lua append one entry per call that changed q:
// n (the entry's number), a and d (the scores added and removed, comma
// separated; "lo:hi" is every integer score from lo to hi).

// aliveChunk bounds one ZADD of Alive.
const aliveChunk = 1000

func (s *Store) LogHead(ctx context.Context, room string) (queue.LogPos, error) {
	k := keysFor(s.prefix, room)
	msgs, err := s.rdb.XRevRangeN(ctx, k.log, "+", "-", 1).Result()
	if err != nil {
		return queue.LogPos{}, fail("log head", err)
	}
	if len(msgs) == 0 {
		return queue.LogPos{}, nil
	}
	e, err := decodeLogEntry(msgs[0])
	return e.LogPos, err
}

func (s *Store) LineScores(ctx context.Context, room string, after *float64, limit int) ([]float64, error) {
	k := keysFor(s.prefix, room)
	min := "-inf"
	if after != nil {
		min = "(" + strconv.FormatFloat(*after, 'g', -1, 64)
	}
	zs, err := s.rdb.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{
		Key: k.q, Start: min, Stop: "+inf", ByScore: true, Count: int64(limit),
	}).Result()
	if err != nil {
		return nil, fail("line scores", err)
	}
	out := make([]float64, len(zs))
	for i, z := range zs {
		out[i] = z.Score
	}
	return out, nil
}

func (s *Store) ReadLog(ctx context.Context, room string, after queue.LogPos, limit int, wait time.Duration) ([]queue.LogEntry, error) {
	k := keysFor(s.prefix, room)
	from := after.ID
	if from == "" {
		from = "0-0"
	}
	block := time.Duration(-1)
	if wait > 0 {
		block = max(wait, time.Millisecond)
	}
	res, err := s.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{k.log, from}, Count: int64(limit), Block: block}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil // nothing came within wait
	}
	if err != nil {
		return nil, fail("read log", err)
	}
	var out []queue.LogEntry
	for _, st := range res {
		for _, m := range st.Messages {
			e, err := decodeLogEntry(m)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *Store) Alive(ctx context.Context, room string, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	k := keysFor(s.prefix, room)
	run := func() error {
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := 0; i < len(ids); i += aliveChunk {
				part := ids[i:min(i+aliveChunk, len(ids))]
				a := aliveArgs{Seen: k.seen, Base: k.base, Q: k.q, Now: ms(now), Members: make([]string, 0, 2*len(part))}
				for _, id := range part {
					a.Members = append(a.Members, membersOf(id)...)
				}
				// Only waiters still in the line (lua/alive.lua).
				keys, argv := marshal(a)
				aliveScript.EvalSha(ctx, p, keys, argv...)
			}
			return nil
		})
		return err
	}
	err := run()
	if isNoScript(err) {
		if err = aliveScript.Load(ctx, s.rdb).Err(); err == nil {
			err = run()
		}
	}
	if err != nil {
		return fail("alive", err)
	}
	return nil
}

// presentSpan bounds a snapshot's bitmap: seqs this far above the lowest
// one of a server's waiters (1 MiB of bits) get the sign of life of Alive
// instead, one field each.
const presentSpan = 1 << 23

func (s *Store) Present(ctx context.Context, room, server string, open []string, now time.Time) error {
	if !validServer(server) {
		return fmt.Errorf("redisstore: present: server name %q: want 1 to 64 letters, digits, '-' or '_'", server)
	}
	type seqID struct {
		seq uint64
		id  string
	}
	seqs := make([]seqID, 0, len(open))
	var others []string
	for _, id := range open {
		// An id of ours names its seq in its first 12 digits (membersOf).
		// tick.lua reads a ticket from before whose id looks alike by the
		// same digits: it may keep another waiter's place a while longer,
		// never drop one early.
		if m := membersOf(id); len(m) == 2 {
			n, _ := strconv.ParseUint(m[0], 10, 64)
			seqs = append(seqs, seqID{n, id})
		} else {
			others = append(others, id)
		}
	}
	lo, bits := uint64(0), []byte{} // no seqs: an empty snapshot replaces the one before
	if len(seqs) > 0 {
		slices.SortFunc(seqs, func(a, b seqID) int { return cmp.Compare(a.seq, b.seq) })
		lo = seqs[0].seq
		top := len(seqs)
		for seqs[top-1].seq-lo >= presentSpan {
			top--
		}
		for _, x := range seqs[top:] {
			others = append(others, x.id)
		}
		bits = make([]byte, (seqs[top-1].seq-lo)/8+1)
		for _, x := range seqs[:top] {
			off := x.seq - lo
			bits[off/8] |= 0x80 >> (off % 8)
		}
	}
	k := keysFor(s.prefix, room)
	err := s.call(ctx, presentArgs{Q: k.q, Present: k.present, Bits: k.bits(server),
		Server: server, Now: ms(now), Lo: strconv.FormatUint(lo, 10), Bitmap: string(bits)}).Err()
	if err != nil {
		return fail("present", err)
	}
	return s.Alive(ctx, room, others, now)
}

// validServer: a server's name goes into a key name.
func validServer(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (s *Store) Rate(ctx context.Context, room string) (float64, error) {
	k := keysFor(s.prefix, room)
	v, err := s.rdb.HGet(ctx, k.stats, "rate").Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fail("rate", err)
	}
	r, _ := strconv.ParseFloat(v, 64)
	return r, nil
}

func decodeLogEntry(m redis.XMessage) (queue.LogEntry, error) {
	e := queue.LogEntry{LogPos: queue.LogPos{ID: m.ID}}
	var err error
	str := func(f string) string { v, _ := m.Values[f].(string); return v }
	if e.N, err = strconv.ParseInt(str("n"), 10, 64); err != nil {
		return e, fmt.Errorf("redisstore: log entry %s: n: %w", m.ID, err)
	}
	if e.Add, err = parseScores(str("a")); err != nil {
		return e, fmt.Errorf("redisstore: log entry %s: %w", m.ID, err)
	}
	if e.Del, err = parseScores(str("d")); err != nil {
		return e, fmt.Errorf("redisstore: log entry %s: %w", m.ID, err)
	}
	return e, nil
}

// maxRun bounds one "lo:hi" run, so a corrupt entry cannot ask for a huge slice.
const maxRun = 10_000_000

// parseScores reads "1,2,5:9" into 1, 2, 5, 6, 7, 8, 9.
func parseScores(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var out []float64
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRun := strings.Cut(part, ":")
		a, err := strconv.ParseFloat(lo, 64)
		if err != nil {
			return nil, fmt.Errorf("score %q: %w", part, err)
		}
		if !isRun {
			out = append(out, a)
			continue
		}
		b, err := strconv.ParseFloat(hi, 64)
		if err != nil || b < a || b-a > maxRun {
			return nil, fmt.Errorf("score run %q", part)
		}
		for x := a; x <= b; x++ {
			out = append(out, x)
		}
	}
	return out, nil
}
