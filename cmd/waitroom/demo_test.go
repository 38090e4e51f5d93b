package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/waitroom/waitroom/examples/shop"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestConfigDemoOnlyInEmbeddedMode: the demo is on by default only when
// Redis and Kafka both run in this process, can be turned off there, and is
// refused beside a real Redis or a real Kafka, where its consumer would
// take the real intents.
func TestConfigDemoOnlyInEmbeddedMode(t *testing.T) {
	real := []string{"--redis-url", "redis://127.0.0.1:6379/0", "--kafka-brokers", "127.0.0.1:9092"}
	for _, tc := range []struct {
		name string
		args []string
		env  func(string) string
		want bool
	}{
		{"embedded", nil, env(), true},
		{"embedded, off", []string{"--demo=false"}, env(), false},
		{"embedded, off by env", nil, env("WAITROOM_DEMO", "false"), false},
		{"embedded, on", []string{"--demo"}, env(), true},
		{"real", real, env(), false},
		{"real, off", append([]string{"--demo=false"}, real...), env(), false},
		{"real redis, embedded kafka", []string{"--redis-url", "redis://127.0.0.1:6379/0", "--kafka-brokers", "embedded"}, env(), false},
		{"embedded redis, real kafka", []string{"--kafka-brokers", "127.0.0.1:9092"}, env(), false},
	} {
		c, err := parseConfig(tc.args, tc.env, io.Discard)
		if err != nil || c.Demo != tc.want {
			t.Errorf("%s: demo %v, %v; want %v", tc.name, c.Demo, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		env  func(string) string
	}{
		{"real", append([]string{"--demo"}, real...), env()},
		{"real by env", real, env("WAITROOM_DEMO", "true")},
		{"real redis", []string{"--demo", "--redis-url", "redis://127.0.0.1:6379/0", "--kafka-brokers", "embedded"}, env()},
		{"real kafka", []string{"--demo", "--kafka-brokers", "127.0.0.1:9092"}, env()},
	} {
		_, err := parseConfig(tc.args, tc.env, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--demo") || !strings.Contains(err.Error(), "embedded mode only") {
			t.Errorf("%s: %v, want --demo refused: embedded mode only", tc.name, err)
		}
	}
	if _, err := parseConfig([]string{"--demo=maybe"}, env(), io.Discard); err == nil {
		t.Error("--demo=maybe accepted")
	}
}

// TestRunWithRealAddressesHasNoDemo starts waitroom on a real redis-server
// and a Kafka-protocol broker: /shop is not served and no consumer of the
// demo shop joins the broker, so real intents are left to the real checkout.
func TestRunWithRealAddressesHasNoDemo(t *testing.T) {
	rs := redistest.Start(t)
	broker := kafkatest.Start(t, "waitroom.intents", "waitroom.results")
	dir := t.TempDir()
	key := filepath.Join(dir, "signing-key.pem")
	if err := run(context.Background(), []string{"--create-signing-key", "--signing-key", key}, env(), io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--redis-url", rs.URL(), "--signing-key", key,
			"--kafka-brokers", strings.Join(broker.Addrs(), ","), "--admin-token", "7d2f9a41c6e08b3f5a9d1e7c40b2f86a"}, env(), logs,
			func(addr string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("run ended early: %v\n%s", err, logs)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start")
	}
	for _, path := range []string{"/shop", "/shop?wr_token=x.y.z"} {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, res.StatusCode)
		}
	}
	if res, err := http.Post("http://"+addr+"/shop/complete", "", nil); err != nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("POST /shop/complete: %v %v, want 404", res, err)
	}
	// The server's own results consumer joins at start, as the demo's did:
	// once its group is on the broker, a demo consumer would be too.
	kc := &kafka.Client{Addr: kafka.TCP(broker.Addrs()...), Timeout: 5 * time.Second}
	var groups []string
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		res, err := kc.ListGroups(ctx, &kafka.ListGroupsRequest{})
		groups = groups[:0]
		if err == nil {
			for _, g := range res.Groups {
				groups = append(groups, g.GroupID)
			}
		}
		if len(groups) > 0 || time.Since(start) > 30*time.Second {
			break
		}
	}
	if len(groups) == 0 {
		t.Fatal("no consumer group of waitroom's own joined the broker")
	}
	if slices.Contains(groups, shop.DefaultGroupID) {
		t.Fatalf("consumer groups %v: the demo shop consumes the real intents topic", groups)
	}
	if strings.Contains(logs.String(), "demo shop") {
		t.Errorf("the start log names the demo:\n%s", logs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
