package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisCLI creates the cluster; tests of the skip point it elsewhere.
var redisCLI = "redis-cli"

const (
	// ClusterMasters is the number of masters (shards) of a test cluster.
	ClusterMasters = 3
	// clusterTimeout bounds creating the cluster and waiting for every node
	// to call it ok: gossip on a loaded 2-core machine takes seconds.
	clusterTimeout = 60 * time.Second
)

// Cluster is a real Redis Cluster of ClusterMasters masters without
// replicas, each a redis-server process on free loopback ports.
type Cluster struct {
	nodes []*Server
	dir   string // removed on stop when the cluster made it
}

// StartCluster starts a cluster of the test's own, stopped when the test
// ends. Where redis-server or redis-cli is missing it skips the test, or
// fails it in CI and with WAITROOM_REQUIRE_REDIS=1: miniredis has no
// cluster to fall back on.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	needClusterTools(tb)
	c, err := startCluster(tb.TempDir())
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(c.stop)
	return c
}

var sharedCluster struct {
	once sync.Once
	c    *Cluster
	err  error
}

// SharedCluster returns the one cluster of the test binary, started on
// first use and stopped by Main. Tests sharing it keep apart with Prefix.
func SharedCluster(tb testing.TB) *Cluster {
	tb.Helper()
	needClusterTools(tb)
	sharedCluster.once.Do(func() {
		dir, err := os.MkdirTemp("", "redistest-cluster-")
		if err != nil {
			sharedCluster.err = fmt.Errorf("shared cluster dir: %w", err)
			return
		}
		sharedCluster.c, sharedCluster.err = startCluster(dir)
		if sharedCluster.err != nil {
			_ = os.RemoveAll(dir)
			return
		}
		sharedCluster.c.dir = dir
	})
	if sharedCluster.err != nil {
		tb.Fatalf("redistest: shared cluster: %v", sharedCluster.err)
	}
	return sharedCluster.c
}

func stopSharedCluster() {
	if c := sharedCluster.c; c != nil {
		c.stop()
	}
}

// needClusterTools skips or fails the test when the cluster's programs are
// missing, as decide rules for the single server.
func needClusterTools(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("redistest: -short starts no Redis Cluster; the full tier does")
	}
	var missing []error
	for _, bin := range []string{redisServer, redisCLI} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, err)
		}
	}
	skip, err := decide(errors.Join(missing...), os.Getenv)
	if err != nil {
		tb.Fatalf("redistest: a cluster needs redis-server and redis-cli (apt-get install redis-server redis-tools): %v", err)
	}
	if skip {
		tb.Skipf("redistest: a cluster needs redis-server and redis-cli, and miniredis has none: %v", errors.Join(missing...))
	}
}

// Addrs are the masters' host:port.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.Addr()
	}
	return out
}

// URL is the cluster as --redis-url takes it: every master, comma-separated.
func (c *Cluster) URL() string { return "redis://" + strings.Join(c.Addrs(), ",") + "/0" }

// Client returns a cluster client, closed when the test ends.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	tb.Cleanup(func() { _ = cc.Close() })
	return cc
}

// NodeClients return a plain client of each master, in Addrs' order, closed
// when the test ends: for asking a node what it holds itself.
func (c *Cluster) NodeClients(tb testing.TB) []*redis.Client {
	tb.Helper()
	out := make([]*redis.Client, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.Client(tb)
	}
	return out
}

func (c *Cluster) stop() {
	for _, n := range c.nodes {
		n.Kill()
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// startCluster starts the masters in dir, joins them with redis-cli and
// waits until every node calls the cluster ok.
func startCluster(dir string) (*Cluster, error) {
	c := &Cluster{}
	for i := range ClusterMasters {
		nodeDir := filepath.Join(dir, "node"+strconv.Itoa(i))
		if err := os.Mkdir(nodeDir, 0o700); err != nil {
			c.stop()
			return nil, fmt.Errorf("cluster node dir: %w", err)
		}
		n, err := startClusterNode(nodeDir)
		if err != nil {
			c.stop()
			return nil, err
		}
		c.nodes = append(c.nodes, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, redisCLI, args...).CombinedOutput(); err != nil {
		c.stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %w\n%s", err, strings.TrimSpace(string(out)))
	}
	if err := c.waitOK(ctx); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// startClusterNode starts one cluster-enabled redis-server. Its cluster bus
// gets a free port of its own (--cluster-port), since port+10000 may be
// taken or beyond 65535; when another process takes either port first,
// redis exits and a fresh pair is tried.
func startClusterNode(dir string) (*Server, error) {
	var errs []error
	for range startAttempts {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		bus, err := freePort()
		if err != nil {
			return nil, err
		}
		if bus == port {
			continue
		}
		p, err := startProcess(port, dir,
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", // in dir
			"--cluster-port", strconv.Itoa(bus),
		)
		if err == nil {
			return &Server{addr: addrOf(port), port: port, dir: dir, proc: p}, nil
		}
		errs = append(errs, err)
		if !errors.Is(err, errExited) {
			break
		}
		_ = os.Remove(filepath.Join(dir, "nodes.conf")) // written with the lost port
	}
	return nil, fmt.Errorf("start a cluster node: %w", errors.Join(errs...))
}

// waitOK polls every node with a growing pause until each sees all slots
// served by all masters.
func (c *Cluster) waitOK(ctx context.Context) error {
	pause := 5 * time.Millisecond
	for {
		last := c.notOK(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster %s not ok after %v: %w", strings.Join(c.Addrs(), ","), clusterTimeout, last)
		case <-time.After(pause):
		}
		pause = min(pause*2, 100*time.Millisecond)
	}
}

// notOK says what the first node that is not ready yet reports, or nil.
func (c *Cluster) notOK(ctx context.Context) error {
	want := map[string]string{
		"cluster_state":          "ok",
		"cluster_slots_assigned": "16384",
		"cluster_slots_ok":       "16384",
		"cluster_known_nodes":    strconv.Itoa(len(c.nodes)),
		"cluster_size":           strconv.Itoa(len(c.nodes)),
	}
	for _, n := range c.nodes {
		info, err := clusterInfo(ctx, n.Addr())
		if err != nil {
			return fmt.Errorf("%s: %w", n.Addr(), err)
		}
		for k, v := range want {
			if info[k] != v {
				return fmt.Errorf("%s: %s is %q, want %q", n.Addr(), k, info[k], v)
			}
		}
	}
	return nil
}

func clusterInfo(ctx context.Context, addr string) (map[string]string, error) {
	cl := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer cl.Close()
	s, err := cl.ClusterInfo(ctx).Result()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for line := range strings.SplitSeq(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out, nil
}
