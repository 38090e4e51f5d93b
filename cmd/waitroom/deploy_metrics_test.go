package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/metrics"
)

// startForTest runs the whole program with args (embedded Redis and Kafka
// unless args say otherwise) and returns its address; it stops with the test.
func startForTest(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	logs := &syncBuffer{}
	done := make(chan error, 1)
	args = append([]string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--embed-demo-addr", "off"}, args...)
	go func() {
		done <- run(ctx, args, func(string) string { return "" }, logs, func(addr string) { addrc <- addr })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	select {
	case addr := <-addrc:
		return addr
	case err := <-done:
		done <- err
		t.Fatalf("run ended early: %v\n%s", err, logs)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start")
	}
	return ""
}

// metricRef is a metric name in a PromQL expression of ours.
var metricRef = regexp.MustCompile(`\b(?:waitroom|process|go)_[a-z0-9_]+\b`)

// referencedMetrics are the metric names deploy/'s dashboard and rules use.
func referencedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, f := range []string{"grafana/waitroom.json", "prometheus/alerts.yaml", "prometheus/alerts_test.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "deploy", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range metricRef.FindAllString(string(b), -1) {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if strings.HasSuffix(m, "_seconds"+suffix) {
					m = strings.TrimSuffix(m, suffix)
				}
			}
			if !slices.Contains(out[m], f) {
				out[m] = append(out[m], f)
			}
		}
	}
	return out
}

// TestDashboardAndAlertsNameRealMetrics: every metric the Grafana dashboard
// and the alert rules name is served on a real server's /metrics (with a
// gate, so its series show), or is one waitroom registers that shows after
// its first event (a Redis error, an observed wait).
func TestDashboardAndAlertsNameRealMetrics(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(up.Close)
	addr := startForTest(t, "--upstream", up.URL, "--protect", "/checkout/*", "--gate-room", "demo")
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", res.StatusCode)
	}
	served := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "# TYPE ") {
			served[strings.Fields(line)[2]] = true
		}
	}
	registered := metrics.Names()
	refs := referencedMetrics(t)
	if len(refs) < 10 {
		t.Fatalf("found only %d metric names in deploy/: %v", len(refs), refs)
	}
	for name, files := range refs {
		if !served[name] && !slices.Contains(registered, name) {
			t.Errorf("%v name %s, which waitroom does not serve", files, name)
		}
	}
	for _, want := range []string{"waitroom_room_waiting", "waitroom_room_capacity", "waitroom_degraded", "waitroom_gate_upstream_inflight"} {
		if !served[want] {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
