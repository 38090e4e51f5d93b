package redistest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestClusterServesEverySlot(t *testing.T) {
	c := StartCluster(t)
	if len(c.Addrs()) != ClusterMasters {
		t.Fatalf("addrs %v, want %d", c.Addrs(), ClusterMasters)
	}
	cc := c.Client(t)
	masters := map[string]bool{}
	for _, s := range mustSlots(t, cc) {
		masters[s.Nodes[0].Addr] = true
	}
	for _, a := range c.Addrs() {
		if !masters[a] {
			t.Errorf("%s serves no slot; masters with slots: %v", a, masters)
		}
	}
	// Keys of different slots land on different nodes, and the cluster
	// client routes them all.
	for i := range 30 {
		k := fmt.Sprintf("{r%d}:k", i)
		if err := cc.Set(ctx(t), k, i, 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	held := 0
	for i, n := range c.NodeClients(t) {
		size, err := n.DBSize(ctx(t)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if size == 0 {
			t.Errorf("node %s holds none of 30 keys", c.Addrs()[i])
		}
		held += int(size)
	}
	if held != 30 {
		t.Fatalf("nodes hold %d keys, want 30", held)
	}
	if !strings.HasPrefix(c.URL(), "redis://") || strings.Count(c.URL(), ",") != ClusterMasters-1 {
		t.Fatalf("URL %q", c.URL())
	}
}

func mustSlots(t *testing.T, cc *redis.ClusterClient) []redis.ClusterSlot {
	t.Helper()
	slots, err := cc.ClusterSlots(ctx(t)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return slots
}

func TestClusterCleanupStopsNodes(t *testing.T) {
	var c *Cluster
	var dir string
	t.Run("owner", func(t *testing.T) {
		c = StartCluster(t)
		dir = c.nodes[0].dir
	})
	if c == nil { // the owner skipped: no redis-server or redis-cli here
		t.Skip("redistest: a cluster needs redis-server and redis-cli")
	}
	for _, a := range c.Addrs() {
		if _, err := serverPID(a); err == nil {
			t.Errorf("node %s still answers after its test's cleanup", a)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("node dir %s left behind: %v", dir, err)
	}
}

func TestSharedCluster(t *testing.T) {
	a, b := SharedCluster(t), SharedCluster(t)
	if a != b {
		t.Fatal("SharedCluster started a second cluster")
	}
	if err := a.Client(t).Ping(ctx(t)).Err(); err != nil {
		t.Fatal(err)
	}
}

// Without redis-cli a cluster cannot be made: the test skips, or fails where
// Redis is required (caught by a recorder, since Fatal would end this test).
func TestClusterWithoutTools(t *testing.T) {
	old := redisCLI
	redisCLI = "redis-cli-not-installed"
	t.Cleanup(func() { redisCLI = old })
	t.Setenv("CI", "")
	t.Setenv("WAITROOM_REQUIRE_REDIS", "")
	var sub *testing.T
	t.Run("optional", func(t *testing.T) {
		sub = t
		StartCluster(t)
		t.Error("started a cluster without redis-cli")
	})
	if !sub.Skipped() {
		t.Fatal("the optional run did not skip")
	}
	t.Setenv("WAITROOM_REQUIRE_REDIS", "1")
	ft := &fatalRecorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		needClusterTools(ft)
	}()
	if !strings.Contains(ft.msg, "redis-tools") {
		t.Fatalf("required: %q, want a failure saying what to install", ft.msg)
	}
}

// fatalRecorder catches Fatalf's message and stops like Fatalf would.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

func (f *fatalRecorder) Skipf(format string, args ...any) {
	f.msg = "skip: " + fmt.Sprintf(format, args...)
	panic(f)
}
