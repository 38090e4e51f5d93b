package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestRunOnRedisCluster starts the server with --redis-url naming the three
// masters of a real Redis Cluster: rooms on every shard take visitors, the
// admission loop lets the waiting ones in, and their tokens verify.
func TestRunOnRedisCluster(t *testing.T) {
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	cluster := redistest.StartCluster(t)
	cc := cluster.Client(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "signing-key.pem")
	if err := run(context.Background(), []string{"--create-signing-key", "--signing-key", key}, env(), io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	const token = "cluster-test-admin-token-0123456789"
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	logs := &syncBuffer{}
	go func() {
		done <- run(ctx, []string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--redis-url", cluster.URL(),
			"--signing-key", key, "--kafka-brokers", "embedded", "--admin-token", token, "--embed-demo-addr", "off"},
			env(), logs, func(addr string) { addrc <- addr })
	}()
	var base string
	select {
	case addr := <-addrc:
		base = "http://" + addr
	case err := <-done:
		t.Fatalf("run ended early: %v\n%s", err, logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("server did not start\n%s", logs)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("run did not stop on cancel")
		}
	})
	c := &http.Client{Timeout: 10 * time.Second}

	// One room per master, found by asking the cluster where each lands.
	masterOf := map[string]string{}
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var rooms []string
	for i := 0; len(rooms) < redistest.ClusterMasters && i < 1000; i++ {
		room := fmt.Sprintf("drop-%d", i)
		slot, err := cc.ClusterKeySlot(ctx, "{"+room+"}").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range slots {
			if m := s.Nodes[0].Addr; int64(s.Start) <= slot && slot <= int64(s.End) && masterOf[m] == "" {
				masterOf[m] = room
				rooms = append(rooms, room)
			}
		}
	}
	if len(rooms) != redistest.ClusterMasters {
		t.Fatalf("rooms %v do not cover the masters", rooms)
	}

	for _, room := range rooms {
		if r := call(t, c, "PUT", base+"/admin/api/rooms/"+room, token,
			`{"batch_size": 1, "batch_interval_ms": 200, "jitter_ms": 0, "bot_protection": {"proof_of_work": "off"}}`); r.status != 201 {
			t.Fatalf("create %s: %d %v", room, r.status, r.body)
		}
		var tickets []string
		var visitors []*http.Client
		for i := range 3 {
			jar, _ := cookiejar.New(nil)
			v := &http.Client{Jar: jar, Timeout: 10 * time.Second}
			r := call(t, v, "POST", base+"/api/rooms/"+room+"/enter", "", "")
			if r.status != 200 {
				t.Fatalf("enter %s: %d %v", room, r.status, r.body)
			}
			tickets = append(tickets, r.body["ticket"].(string))
			visitors = append(visitors, v)
			t.Logf("%s: visitor %d %s at %v", room, i, r.body["state"], r.body["position"])
		}
		for i, v := range visitors {
			var tok string
			testkit.Until(t, 20*time.Second, fmt.Sprintf("%s: visitor %d admitted", room, i), func() bool {
				r := call(t, v, "GET", base+"/api/rooms/"+room+"/tickets/"+tickets[i], "", "")
				if r.status != 200 {
					t.Fatalf("status in %s: %d %v", room, r.status, r.body)
				}
				tok, _ = r.body["token"].(string)
				return r.body["state"] == "admitted"
			})
			if r := call(t, c, "POST", base+"/api/tokens/verify", "", `{"token": "`+tok+`", "room": "`+room+`"}`); r.body["valid"] != true {
				t.Fatalf("token of %s's visitor %d: %d %v", room, i, r.status, r.body)
			}
		}
	}
	r := call(t, c, "GET", base+"/admin/api/rooms", token, "")
	if list, _ := r.body["rooms"].([]any); r.status != 200 || len(list) != len(rooms) {
		t.Fatalf("rooms: %d %v", r.status, r.body)
	}
	// A wrong admin token is counted in the cluster and refused, not an error.
	if r := call(t, c, "GET", base+"/admin/api/rooms", "wrong-token-0123456789", ""); r.status != http.StatusUnauthorized {
		t.Fatalf("wrong admin token: %d %v", r.status, r.body)
	}
	if r := call(t, c, "GET", base+"/readyz", "", ""); r.status != 200 || r.body["mode"] == "degraded" {
		t.Fatalf("readyz: %d %v", r.status, r.body)
	}
	for _, bad := range []string{"CROSSSLOT", "MOVED", "level=ERROR", "degraded mode"} {
		if strings.Contains(logs.String(), bad) {
			t.Fatalf("log says %s:\n%s", bad, logs)
		}
	}
}
