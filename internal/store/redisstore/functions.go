package redisstore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// script is one operation's Lua (scripts.go). Where Redis has functions
// (7.0 and later) it runs as a function of this release's library, with
// FCALL: the library's chunk, the record codec's helpers with it, runs once
// when the library is loaded, where EVALSHA runs a script's whole chunk,
// and creates each of those helpers anew, on every call (a tenth of an
// enter's instructions, and garbage for Lua's collector). Where Redis has no
// functions (miniredis, Redis 6) it runs with EVALSHA.
type script struct {
	op         string
	body       string
	withRecord bool
	*redis.Script
}

// scripts are every script, in the order declared: the library's content.
var scripts []*script

func newScript(op, body string, withRecord bool) *script {
	src := vocabLua + codesLua + body
	if withRecord {
		src = vocabLua + codesLua + recordLua + body
	}
	s := &script{op: op, body: body, withRecord: withRecord, Script: redis.NewScript(src)}
	scripts = append(scripts, s)
	return s
}

// fn is the script's function name: names are global in Redis, so each
// carries the library's version, and two releases' libraries live side by
// side during a rolling upgrade.
func (s *script) fn() string { return "waitroom_" + s.op + "_" + library().version }

type lib struct{ version, code string }

// library is this release's function library: the vocabulary and the record
// codec once, then
// each script's body as the callback of its function. The version is a hash
// of the sources, so a changed script is a new library.
var library = sync.OnceValue(func() lib {
	h := sha1.New()
	h.Write([]byte(vocabLua))
	h.Write([]byte(codesLua))
	h.Write([]byte(recordLua))
	for _, s := range scripts {
		fmt.Fprintf(h, "\x00%s\x00%t\x00%s", s.op, s.withRecord, s.body)
	}
	v := hex.EncodeToString(h.Sum(nil))[:12]
	var b strings.Builder
	fmt.Fprintf(&b, "#!lua name=waitroom_%s\n%s%s%s\n", v, vocabLua, codesLua, recordLua)
	for _, s := range scripts {
		// KEYS and ARGV become the callback's parameters: the bodies read
		// them as EVAL's globals.
		fmt.Fprintf(&b, "redis.register_function('waitroom_%s_%s', function(KEYS, ARGV)\n%s\nend)\n", s.op, v, s.body)
	}
	return lib{version: v, code: b.String()}
})

// functions is what a Store knows of its Redis's functions.
type functions struct {
	// none: Redis has no FCALL; every script runs with EVALSHA.
	none atomic.Bool
	// loads counts this store's library loads, so that the calls that found
	// the library missing at once load it once.
	loads atomic.Uint64
	mu    sync.Mutex
}

// call runs a's script with a's KEYS and ARGV (args.go).
func (s *Store) call(ctx context.Context, a scriptArgs) *redis.Cmd {
	keys, argv := marshal(a)
	return s.run(ctx, a.script(), keys, argv...)
}

// run runs sc with keys and args: as a function where Redis has them,
// loading the library when Redis does not have it (first use, a restart,
// FUNCTION FLUSH, a new cluster master), else with EVALSHA.
func (s *Store) run(ctx context.Context, sc *script, keys []string, args ...any) *redis.Cmd {
	if s.fns.none.Load() {
		return sc.Run(ctx, s.rdb, keys, args...)
	}
	seen := s.fns.loads.Load()
	cmd := s.rdb.FCall(ctx, sc.fn(), keys, args...)
	err := cmd.Err()
	switch {
	case err == nil:
	case isFunctionMissing(err):
		// The function did not run: calling it again once loaded is safe.
		if lerr := s.loadLibrary(ctx, seen); lerr != nil {
			failed := redis.NewCmd(ctx)
			failed.SetErr(lerr)
			return failed
		}
		return s.rdb.FCall(ctx, sc.fn(), keys, args...)
	case isUnknownCommand(err):
		s.fns.none.Store(true)
		return sc.Run(ctx, s.rdb, keys, args...)
	}
	return cmd
}

// loadLibrary loads the library on every master, unless another call loaded
// it since this one read seen.
func (s *Store) loadLibrary(ctx context.Context, seen uint64) error {
	s.fns.mu.Lock()
	defer s.fns.mu.Unlock()
	if s.fns.loads.Load() != seen {
		return nil
	}
	code := library().code
	var err error
	if c, ok := s.rdb.(*redis.ClusterClient); ok {
		err = c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			return n.FunctionLoadReplace(ctx, code).Err()
		})
	} else {
		err = s.rdb.FunctionLoadReplace(ctx, code).Err()
	}
	if err != nil {
		return fmt.Errorf("load the function library: %w", err)
	}
	s.fns.loads.Add(1)
	return nil
}

func isFunctionMissing(err error) bool {
	return strings.HasPrefix(err.Error(), "ERR Function not found")
}

// isUnknownCommand: Redis (or miniredis) has no FCALL.
func isUnknownCommand(err error) bool {
	return strings.HasPrefix(err.Error(), "ERR unknown command")
}
