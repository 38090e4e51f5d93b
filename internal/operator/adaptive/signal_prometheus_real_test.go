package adaptive_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/adaptive"
	"github.com/waitroom/waitroom/internal/testkit/tooltest"
	"github.com/waitroom/waitroom/queue"
)

// startPrometheus runs a real Prometheus (Debian's) scraping target every
// second and returns its URL once it is ready.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	bin := tooltest.Need(t, "prometheus", "apt-get install prometheus")
	dir := t.TempDir()
	conf := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n  - job_name: checkout\n    static_configs: [{targets: [%q]}]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := tooltest.FreeAddr(t)
	tooltest.Start(t, exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr))
	tooltest.WaitListening(t, addr, 20*time.Second)
	return "http://" + addr
}

// promValue asks Prometheus for query directly; NaN when it has no sample.
func promValue(t *testing.T, base, query string) float64 {
	t.Helper()
	res, err := http.Get(base + "/api/v1/query?" + url.Values{"query": {query}}.Encode())
	if err != nil {
		return math.NaN()
	}
	defer res.Body.Close()
	var a struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if json.NewDecoder(res.Body).Decode(&a) != nil || len(a.Data.Result) == 0 {
		return math.NaN()
	}
	s, _ := a.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// awaitProm waits until Prometheus has scraped want: it scrapes on its own
// schedule, which the test can only watch.
func awaitProm(t *testing.T, base, query string, want float64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for promValue(t, base, query) != want {
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not see %s = %v within 30 s (has %v)", query, want, promValue(t, base, query))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestAdaptiveWithARealPrometheus: adaptive activation reads a real
// Prometheus scraping a checkout's exporter: below open_at the line stays
// closed, and once the checkout's load reaches it the line opens.
func TestAdaptiveWithARealPrometheus(t *testing.T) {
	var load atomic.Value
	load.Store("0.2")
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE checkout_load gauge\ncheckout_load %s\n", load.Load())
	}))
	t.Cleanup(exporter.Close)
	prom := startPrometheus(t, exporter.Listener.Addr().String())
	const query = `max(checkout_load{job="checkout"})`
	awaitProm(t, prom, query, 0.2)

	e := newEnv(t)
	s := queue.DefaultSettings()
	s.Activation = queue.ActivationAdaptive
	s.Adaptive = &queue.Adaptive{Signal: queue.SignalPrometheus, PrometheusURL: prom, Query: query,
		OpenAt: 0.7, CloseAt: 0.5, WindowS: int64(window / time.Second), WindowsToClose: 3}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := e.store.PutRoom(e.ctx, "sale", s); err != nil {
		t.Fatal(err)
	}
	c := e.start(adaptive.Options{Signal: adaptive.Signals{queue.SignalPrometheus: adaptive.NewPrometheusSignal(nil)},
		ReadTimeout: 5 * time.Second})
	st := e.state(c, "sale")
	if st.Open || st.Reading == nil || *st.Reading != 0.2 || st.SignalError != "" {
		t.Fatalf("checkout at 0.2 (< open_at 0.7): %+v, want closed with the reading", st)
	}

	load.Store("0.9")
	awaitProm(t, prom, query, 0.9)
	e.advance(window)
	if st = e.state(c, "sale"); !st.Open || !c.Open("sale") || *st.Reading != 0.9 {
		t.Fatalf("checkout at 0.9 (≥ open_at 0.7): %+v, want the line open", st)
	}
	if tr := e.transition(); tr.Room != "sale" || !tr.Open {
		t.Fatalf("transition %+v", tr)
	}
}
