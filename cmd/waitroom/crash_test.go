package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestKilledBetweenOutboxAndKafkaLosesNothing runs the real binary. With
// the Kafka broker down, intents are accepted (durably in the outbox) but
// cannot be published; the process is then SIGKILLed, and started again
// with the broker up: every accepted intent is published after the restart.
func TestKilledBetweenOutboxAndKafkaLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	bin := buildBinary(t)
	rs := redistest.Start(t)
	broker := kafkatest.Start(t, outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic)
	brokerAddr := broker.Addrs()[0]
	broker.Stop()
	dataDir := t.TempDir()
	const token = "crash-test-admin-token-0123456789"
	// With a real Redis the key file must exist: made once, as an operator would.
	if out, err := exec.Command(bin, "--create-signing-key", "--data-dir", dataDir).CombinedOutput(); err != nil {
		t.Fatalf("create signing key: %v\n%s", err, out)
	}

	start := func() (*exec.Cmd, string) {
		cmd := exec.Command(bin, "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--redis-url", rs.URL(),
			"--admin-token", token, "--kafka-brokers", brokerAddr, "--embed-demo-addr", "off", "--log-format", "json")
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		// The address comes from the "listening" log line.
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			var l map[string]any
			if json.Unmarshal(lines.Bytes(), &l) == nil && l["msg"] == "waitroom is listening" {
				go func() { _, _ = io.Copy(io.Discard, stderr) }()
				return cmd, l["addr"].(string)
			}
		}
		t.Fatalf("waitroom never listened: %v", lines.Err())
		return nil, ""
	}
	admin := func(base, method, path, body string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %v %v", method, path, res, err)
		}
		res.Body.Close()
	}

	cmd, addr := start()
	base := "http://" + addr
	admin(base, "PUT", "/admin/api/rooms/sale", `{"paused": true, "bot_protection": {"proof_of_work": "off"}}`)
	const n = 20
	type visitor struct {
		c  *http.Client
		id string
	}
	// The visitors were in line before the outage: only they may leave intents.
	var clients []*http.Client
	for range n {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
		res, err := c.Post(base+"/api/rooms/sale/enter", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		clients = append(clients, c)
	}
	admin(base, "POST", "/admin/api/degrade", `{"on": true}`)
	var vs []visitor
	for i, c := range clients {
		res, err := c.Post(base+"/api/rooms/sale/intents", "application/json",
			strings.NewReader(fmt.Sprintf(`{"payload": {"product": "sneaker-drop", "quantity": %d}}`, i%4+1)))
		if err != nil {
			t.Fatal(err)
		}
		var in map[string]any
		_ = json.NewDecoder(res.Body).Decode(&in)
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted || in["status"] != "accepted" {
			t.Fatalf("intent %d: %d %v", i, res.StatusCode, in)
		}
		vs = append(vs, visitor{c, in["intent_id"].(string)})
	}
	// Killed with the broker down: nothing was published.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	broker.Restart()
	_, addr = start()
	base = "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, v := range vs {
		for {
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/intents/"+v.id, nil)
			res, err := v.c.Do(req)
			if err != nil {
				t.Fatalf("intent %s after the restart: %v", v.id, err)
			}
			var in map[string]any
			_ = json.NewDecoder(res.Body).Decode(&in)
			res.Body.Close()
			if s := in["status"]; s == "published" || s == "processed" || s == "rejected" {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("intent %s never published after the restart: %v", v.id, in)
			case <-time.After(100 * time.Millisecond): // polling another process
			}
		}
	}
	got := broker.Read(t, outbox.DefaultIntentsTopic, n)
	if len(got) < n {
		t.Fatalf("%d messages in Kafka, want %d", len(got), n)
	}
}
