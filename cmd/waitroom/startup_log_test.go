package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestStartupLogNamesOnlyURLsThatExist: on a real Redis there is no demo
// room, so the "listening" line names the dashboard but no demo URLs, and
// every URL it names answers.
func TestStartupLogNamesOnlyURLsThatExist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // its own processes and redis-server; it mostly waits on them
	p, _ := startOnRedis(t, buildBinary(t), "--admin-token", "3f9a0c6d2b8e4f1a7c5e9d0b2a4c6e8f")
	var listening map[string]any
	p.mu.Lock()
	for _, l := range p.lines {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "waitroom is listening" {
			listening = m
		}
	}
	p.mu.Unlock()
	if listening == nil {
		t.Fatal("no listening line")
	}
	if _, ok := listening["waiting_page"]; ok {
		t.Errorf("listening line %v names the demo room's page, which this mode has not", listening)
	}
	named := 0
	for k, v := range listening {
		u, ok := v.(string)
		if !ok || !strings.HasPrefix(u, "http") || k == "public_url" {
			continue
		}
		named++
		// --addr 127.0.0.1:0: the default public URL keeps port 0.
		u = strings.Replace(u, "127.0.0.1:0", p.addr, 1)
		res, err := http.Get(u)
		if err != nil {
			t.Fatalf("%s %s: %v", k, u, err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusNotFound {
			t.Errorf("the listening line's %s %s answers 404", k, u)
		}
	}
	if named == 0 {
		t.Errorf("listening line %v names no URL", listening)
	}
}
