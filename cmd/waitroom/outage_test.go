package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/outbox"
	"github.com/waitroom/waitroom/internal/testkit"
	"github.com/waitroom/waitroom/internal/testkit/kafkatest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// proc is one waitroom process of a test, its stderr kept line by line.
type proc struct {
	cmd  *exec.Cmd
	addr string

	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

// startBinary runs bin with args and returns once it logs that it listens
// (the args must include --log-format json).
func startBinary(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	stderr, _ := p.cmd.StderrPipe()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	addrc := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil && l["msg"] == "waitroom is listening" {
				addrc <- l["addr"].(string)
			}
		}
	}()
	select {
	case p.addr = <-addrc:
	case <-p.done:
		t.Fatalf("waitroom exited before listening:\n%s", strings.Join(p.lines, "\n"))
	case <-time.After(60 * time.Second):
		t.Fatal("waitroom never listened")
	}
	return p
}

// stop sends SIGTERM and waits for the process and its log.
func (p *proc) stop(t *testing.T) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
	<-p.done
}

// onlyJSON fails unless every line the process wrote is a JSON object.
func (p *proc) onlyJSON(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("a log line that is not JSON with --log-format json: %q", l)
		}
	}
}

type answer struct {
	status int
	body   map[string]any
}

func call(t *testing.T, c *http.Client, method, url, token, body string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return answer{res.StatusCode, m}
}

// TestRestartDuringRedisOutage runs the real binary against a real
// redis-server. Redis is SIGKILLed and the waitroom server restarted while
// it is down: from its local snapshot the restarted server serves degraded
// mode (bypassed, the accept page, intents) for every room it knew, and
// stays ready. Redis then comes back empty (no persistence): the rooms are
// put back. With --log-format json every line the process writes is JSON.
func TestRestartDuringRedisOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	bin := buildBinary(t)
	rs := redistest.Start(t)
	broker := kafkatest.Start(t, outbox.DefaultIntentsTopic, outbox.DefaultResultsTopic)
	dataDir := t.TempDir()
	const token = "outage-test-admin-token-0123456789"
	if out, err := exec.Command(bin, "--create-signing-key", "--data-dir", dataDir).CombinedOutput(); err != nil {
		t.Fatalf("create signing key: %v\n%s", err, out)
	}
	args := []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--redis-url", rs.URL(), "--admin-token", token,
		"--kafka-brokers", broker.Addrs()[0], "--embed-demo-addr", "off", "--log-format", "json"}
	c := http.DefaultClient

	first := startBinary(t, bin, args...)
	base := "http://" + first.addr
	rooms := []string{"sale", "drop"}
	// The visitors were in line before the outage: only they may leave intents.
	visitors := map[string]*http.Client{}
	for _, room := range rooms {
		if r := call(t, c, "PUT", base+"/admin/api/rooms/"+room, token, `{"product_id": "sneaker", "product_name": "Sneaker", "allowed_embedders": ["https://shop.example.com"], "bot_protection": {"proof_of_work": "off"}}`); r.status != 201 {
			t.Fatalf("create %s: %d %v", room, r.status, r.body)
		}
		jar, _ := cookiejar.New(nil)
		visitors[room] = &http.Client{Jar: jar, Timeout: 10 * time.Second}
		if r := call(t, visitors[room], "POST", base+"/api/rooms/"+room+"/enter", "", ""); r.status != 200 {
			t.Fatalf("enter %s: %d %v", room, r.status, r.body)
		}
	}
	first.stop(t)
	first.onlyJSON(t)

	rs.Kill()
	second := startBinary(t, bin, args...)
	base = "http://" + second.addr
	for _, room := range rooms {
		visitor := visitors[room]
		testkit.Until(t, 15*time.Second, room+" answers bypassed", func() bool {
			return call(t, visitor, "POST", base+"/api/rooms/"+room+"/enter", "", "").body["state"] == "bypassed"
		})
		res, err := visitor.Get(base + "/rooms/" + room + "/accept")
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("accept page of %s during the outage: %v %v", room, res, err)
		}
		res.Body.Close()
		if r := call(t, visitor, "POST", base+"/api/rooms/"+room+"/intents", "", `{"payload": {"product": "sneaker", "quantity": 1}}`); r.status != 202 {
			t.Fatalf("intent in %s during the outage: %d %v", room, r.status, r.body)
		}
	}
	if r := call(t, c, "GET", base+"/readyz", "", ""); r.status != 200 || r.body["mode"] != "degraded" {
		t.Fatalf("readyz of the restarted server during the outage: %d %v", r.status, r.body)
	}
	if r := call(t, c, "POST", base+"/api/rooms/nope/enter", "", ""); r.status != 404 {
		t.Fatalf("an unknown room during the outage: %d %v", r.status, r.body)
	}

	rs.Restart(t) // empty: no persistence
	testkit.Until(t, 20*time.Second, "rooms put back into the empty Redis", func() bool {
		r := call(t, c, "GET", base+"/admin/api/rooms", token, "")
		list, _ := r.body["rooms"].([]any)
		return r.status == 200 && len(list) == len(rooms)
	})
	if r := call(t, c, "GET", base+"/admin/api/rooms/sale", token, ""); r.status != 200 || r.body["product_id"] != "sneaker" ||
		len(r.body["allowed_embedders"].([]any)) != 1 {
		t.Fatalf("restored settings: %d %v", r.status, r.body)
	}
	second.stop(t)
	second.onlyJSON(t)
}
