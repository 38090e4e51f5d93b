// Package throttle counts wrong attempts (of the admin token) per client
// network, across servers in Redis where Redis answers and in a bounded
// local table where it does not. Only failures count, and only the
// client's own: there is no overall count, so a flood from elsewhere never
// locks out the one who has the right token. What keeps guessing hopeless
// is the token's entropy (128 bits or more, checked at start); the count
// keeps a guessing client cheap to answer and its log lines few.
package throttle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/waitroom/waitroom/internal/vocab"
)

// Limit is at most N failures per Per, as a burst of N that refills evenly.
type Limit struct {
	N   int
	Per time.Duration
}

// Validate says what is wrong with a limit from the configuration.
func (l Limit) Validate() error {
	if l.N < 1 || l.N > 1_000_000 || l.Per < time.Second || l.Per > 24*time.Hour {
		return errors.New("throttle: want 1 to 1000000 failures per 1 s to 24 h")
	}
	return nil
}

// interval is the time one failure takes to be forgotten.
func (l Limit) interval() time.Duration { return l.Per / time.Duration(l.N) }

// blockedFor is how long a client whose allowance runs out `reset` from
// now must wait before its next attempt: it may try while fewer than N
// failures are outstanding, i.e. while reset ≤ Per − interval.
func (l Limit) blockedFor(reset time.Duration) time.Duration {
	return reset - (l.Per - l.interval())
}

// Options configure Failures; zero values pick the defaults.
type Options struct {
	PerClient Limit // default 10 a minute
	// Prefix namespaces the Redis keys (default "wr:"); redis_rate puts
	// its own "rate:" before it: rate:wr:throttle:<name>:<client or *>.
	Prefix string
	// LocalKeys bounds the local table of clients (default 10000).
	LocalKeys int
	Now       func() time.Time
	Logger    *slog.Logger
}

// DefaultPerClient is Options.PerClient's default.
var DefaultPerClient = Limit{N: 10, Per: time.Minute}

// redisTimeout bounds each Redis call: a slow Redis falls back to the local
// table rather than hold the request.
const redisTimeout = 250 * time.Millisecond

// Failures counts one kind of failure (name) per client bucket.
type Failures struct {
	name  string
	o     Options
	rl    *redis_rate.Limiter // nil: local only
	local *local

	mu        sync.Mutex
	skipUntil time.Time // after a Redis failure, count locally for a while
}

// redisBackoff is how long a server counts locally after Redis failed, so
// that a Redis that is down does not slow every admin request.
const redisBackoff = time.Second

// New counts failures of kind name in rdb (nil: on this server only).
func New(rdb redis.UniversalClient, name string, o Options) *Failures {
	if o.PerClient.N == 0 {
		o.PerClient = DefaultPerClient
	}
	if o.Prefix == "" {
		o.Prefix = vocab.KeyPrefix
	}
	if o.LocalKeys <= 0 {
		o.LocalKeys = 10_000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	f := &Failures{name: name, o: o, local: &local{max: o.LocalKeys, tat: map[string]time.Time{}}}
	if rdb != nil {
		f.rl = redis_rate.NewLimiter(rdb)
	}
	return f
}

// Failed counts one wrong token of client (a clientip.Bucket), unless
// the client is locked out already. ok is false when it is locked out
// (answer 429), with how long it must wait; right tokens are never
// counted, so call Failed only once a token was found wrong. Concurrent
// failures are counted one by one (in Redis, by one script), so a client
// gets exactly its allowance of 401s before 429.
func (f *Failures) Failed(ctx context.Context, client string) (wait time.Duration, ok bool) {
	return f.check(ctx, client, f.o.PerClient, 1)
}

func (f *Failures) redisKey(key string) string { return f.o.Prefix + "throttle:" + f.name + ":" + key }

// check adds cost failures to key's count unless the key is blocked, and
// says whether it did and how long the key is blocked now. Redis holds the
// count; this server keeps a copy of what Redis last said, so that a
// blocked client's flood is answered from memory, and so that its count
// survives a Redis outage.
func (f *Failures) check(ctx context.Context, key string, l Limit, cost int) (time.Duration, bool) {
	now := f.o.Now()
	if w := f.local.peek(key, l, now); w > 0 {
		return w, false
	}
	if f.rl == nil || !f.redisUp() {
		return f.local.check(key, l, cost, now)
	}
	rctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	res, err := f.rl.AllowN(rctx, f.redisKey(key), redis_rate.Limit{Rate: l.N, Burst: l.N, Period: l.Per}, cost)
	if err != nil {
		f.redisFailed(ctx, err)
		return f.local.check(key, l, cost, now)
	}
	f.local.mirror(key, now.Add(res.ResetAfter), now)
	return max(l.blockedFor(res.ResetAfter), 0), res.Allowed > 0
}

func (f *Failures) redisFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	f.mu.Lock()
	f.skipUntil = f.o.Now().Add(redisBackoff)
	f.mu.Unlock()
	f.o.Logger.Debug("throttle: count in Redis; counting on this server", "name", f.name, "err", err)
}

func (f *Failures) redisUp() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.o.Now().Before(f.skipUntil)
}

// local is the same count (GCRA: the time at which the key's failures are
// all forgotten) on this server, in a table of at most max keys. A key
// whose failures are all forgotten is not kept.
type local struct {
	max int
	mu  sync.Mutex
	tat map[string]time.Time
}

// overflowKey holds the clients that find the table full, together.
const overflowKey = "+"

// update replaces key's time by fn's answer, within the table's bound.
// With spill false, a key that finds the table full is left out instead
// of counted with the overflow.
func (t *local) update(key string, now time.Time, spill bool, fn func(tat time.Time) time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	tat, ok := t.tat[key]
	if !ok && len(t.tat) >= t.max {
		for k, v := range t.tat {
			if !v.After(now) {
				delete(t.tat, k)
			}
		}
		if len(t.tat) >= t.max {
			if !spill {
				return fn(now)
			}
			key = overflowKey
			tat = t.tat[key]
		}
	}
	if tat.Before(now) {
		tat = now
	}
	tat = fn(tat)
	if tat.After(now) {
		t.tat[key] = tat
	} else {
		delete(t.tat, key)
	}
	return tat
}

// check adds cost failures unless key is blocked; it says how long key is
// blocked now and whether the failures were added.
func (t *local) check(key string, l Limit, cost int, now time.Time) (time.Duration, bool) {
	added := false
	tat := t.update(key, now, true, func(tat time.Time) time.Time {
		if cost > 0 && l.blockedFor(tat.Sub(now)) <= 0 {
			tat, added = tat.Add(time.Duration(cost)*l.interval()), true
		}
		return tat
	})
	return max(l.blockedFor(tat.Sub(now)), 0), added || cost == 0
}

// peek says how long key is blocked by what this server knows of it.
func (t *local) peek(key string, l Limit, now time.Time) time.Duration {
	tat := t.update(key, now, false, func(tat time.Time) time.Time { return tat })
	return max(l.blockedFor(tat.Sub(now)), 0)
}

// mirror takes in what Redis said of key: its failures are forgotten at at,
// unless this server knows of more. A reply can come after failures this
// server counted itself while Redis was slow (a call that timed out falls
// back to the local count): taking the reply's earlier time would forget
// them, and let the key fail again as if they had never been.
func (t *local) mirror(key string, at, now time.Time) {
	t.update(key, now, false, func(tat time.Time) time.Time {
		if tat.After(at) {
			return tat
		}
		return at
	})
}

// RetryAfter is a Retry-After header value for wait: whole seconds, at least 1.
func RetryAfter(wait time.Duration) string {
	s := int64((wait + time.Second - 1) / time.Second)
	return fmt.Sprint(max(s, 1))
}
