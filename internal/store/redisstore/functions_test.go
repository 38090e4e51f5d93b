package redisstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// calls is how many times Redis ran command name (INFO commandstats).
func calls(t *testing.T, c *redis.Client, name string) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+name+":calls="); ok {
			v, _, _ = strings.Cut(v, ",")
			var n int64
			for _, d := range v {
				n = n*10 + int64(d-'0')
			}
			return n
		}
	}
	return 0
}

// libraries are the names of the function libraries Redis holds.
func libraries(t *testing.T, c *redis.Client) []string {
	t.Helper()
	libs, err := c.FunctionList(context.Background(), redis.FunctionListQuery{}).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range libs {
		out = append(out, l.Name)
	}
	return out
}

func lineOn(t *testing.T, rdb redis.UniversalClient) *queue.Line {
	t.Helper()
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	line := queue.NewLine(redisstore.New(rdb, redistest.Prefix(t)), keys, queue.LineOptions{})
	s := queue.DefaultSettings()
	s.Paused = true
	for _, room := range []string{"a", "b", "c", "d"} {
		if err := line.PutRoom(context.Background(), room, s); err != nil {
			t.Fatal(err)
		}
	}
	return line
}

// enterAll enters a new visitor in every room and checks each waits.
func enterAll(t *testing.T, line *queue.Line, who string) {
	t.Helper()
	for _, room := range []string{"a", "b", "c", "d"} {
		tk, _, err := line.Enter(context.Background(), room, who)
		if err != nil {
			t.Fatalf("enter %s: %v", room, err)
		}
		if tk.State != vocab.StateWaiting {
			t.Fatalf("enter %s: %s, want waiting", room, tk.State)
		}
	}
}

// TestScriptsRunAsFunctions: on a redis-server the store runs its scripts
// as functions of one library (FCALL, no EVALSHA), and loads the library
// again when Redis lost it (FUNCTION FLUSH stands in for a restart without
// persistence), on a single server and on every master of a cluster.
func TestScriptsRunAsFunctions(t *testing.T) {
	t.Run("redis-server", func(t *testing.T) {
		needRealRedis(t)
		srv := redistest.Start(t)
		admin := srv.Client(t)
		line := lineOn(t, srv.Client(t))
		enterAll(t, line, "v:one")
		if got := libraries(t, admin); len(got) != 1 || !strings.HasPrefix(got[0], "waitroom_") {
			t.Fatalf("libraries %v, want one waitroom_ library", got)
		}
		if n := calls(t, admin, "evalsha") + calls(t, admin, "eval"); n != 0 {
			t.Fatalf("%d EVAL/EVALSHA calls, want every script as a function", n)
		}
		before := calls(t, admin, "fcall")
		if before < 4 {
			t.Fatalf("%d FCALL calls for 4 enters", before)
		}
		if err := admin.FunctionFlush(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		enterAll(t, line, "v:two")
		if got := libraries(t, admin); len(got) != 1 {
			t.Fatalf("after FUNCTION FLUSH: libraries %v, want the library loaded again", got)
		}
		if n := calls(t, admin, "function|load"); n != 2 {
			t.Fatalf("library loaded %d times, want 2 (first use, after the flush)", n)
		}
	})
	t.Run("redis-cluster", func(t *testing.T) {
		needRealRedis(t)
		c := redistest.StartCluster(t)
		line := lineOn(t, c.Client(t))
		enterAll(t, line, "v:one")
		for _, n := range c.NodeClients(t) {
			if err := n.FunctionFlush(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
		}
		enterAll(t, line, "v:two")
		for i, n := range c.NodeClients(t) {
			if got := libraries(t, n); len(got) != 1 {
				t.Fatalf("node %d: libraries %v, want the library", i, got)
			}
			if n := calls(t, n, "evalsha"); n != 0 {
				t.Fatalf("node %d: %d EVALSHA calls", i, n)
			}
		}
	})
}

// TestScriptsFallBackToEvalsha: a Redis without functions (miniredis here)
// runs the same scripts with EVALSHA.
func TestScriptsFallBackToEvalsha(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	line := lineOn(t, rdb)
	enterAll(t, line, "v:one")
	enterAll(t, line, "v:two")
	if n := m.CommandCount(); n == 0 {
		t.Fatal("miniredis saw no commands")
	}
	tk, _, err := line.Enter(context.Background(), "a", "v:one")
	if err != nil || tk.Position != 1 {
		t.Fatalf("the first visitor again: %+v, %v; want position 1", tk, err)
	}
}
