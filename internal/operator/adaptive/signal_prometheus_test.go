package adaptive_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/operator/adaptive"
	"github.com/waitroom/waitroom/queue"
)

func promSettings(url string) queue.Settings {
	s := queue.DefaultSettings()
	s.Activation = queue.ActivationAdaptive
	s.Adaptive = &queue.Adaptive{Signal: queue.SignalPrometheus, PrometheusURL: url, Query: `avg(up{job="checkout"})`,
		OpenAt: 0.7, CloseAt: 0.5, WindowS: 60, WindowsToClose: 3}
	return s
}

func TestPrometheusSignalAnswers(t *testing.T) {
	cases := []struct {
		name    string
		a       answer
		want    float64
		wantErr string
	}{
		{"vector", reading(0.8125), 0.8125, ""},
		{"first of many", answer{status: 200, body: `{"status":"success","data":{"resultType":"vector","result":[
			{"metric":{"i":"a"},"value":[1,"0.25"]},{"metric":{"i":"b"},"value":[1,"0.9"]}]}}`}, 0.25, ""},
		{"scalar", answer{status: 200, body: `{"status":"success","data":{"resultType":"scalar","result":[1764000000,"1.5"]}}`}, 1.5, ""},
		{"empty vector", answer{status: 200, body: `{"status":"success","data":{"resultType":"vector","result":[]}}`}, 0, "no samples"},
		{"matrix", answer{status: 200, body: `{"status":"success","data":{"resultType":"matrix","result":[]}}`}, 0, `result type "matrix"`},
		{"NaN", answer{status: 200, body: `{"status":"success","data":{"resultType":"scalar","result":[1,"NaN"]}}`}, 0, "sample value is NaN"},
		{"not a number", answer{status: 200, body: `{"status":"success","data":{"resultType":"scalar","result":[1,"abc"]}}`}, 0, `sample value "abc"`},
		{"query error", answer{status: 422, body: `{"status":"error","errorType":"execution","error":"too many samples"}`}, 0, "answered 422: execution too many samples"},
		{"500 text", answer{status: 500, body: "upstream down"}, 0, "answered 500 Internal Server Error"},
		{"garbage", answer{status: 200, body: "{"}, 0, "decode answer"},
	}
	p := newPromServer(t)
	sig := adaptive.NewPrometheusSignal(nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p.script(c.a)
			got, err := sig.Read(context.Background(), "sale", promSettings(p.srv.URL))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.HasPrefix(err.Error(), "adaptive: read prometheus: ") {
					t.Fatalf("err = %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

// TestPrometheusSignalURL: the API path goes after a base path (Prometheus
// behind a prefix), and the query is sent encoded.
func TestPrometheusSignalURL(t *testing.T) {
	var gotPath, gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotQuery = r.URL.Path, r.URL.Query().Get("query")
		_, _ = w.Write([]byte(reading(1).body))
	}))
	defer srv.Close()
	s := promSettings(srv.URL + "/prometheus/")
	s.Adaptive.Query = `sum(rate(http_requests_total{code=~"5.."}[1m])) / 100`
	if _, err := adaptive.NewPrometheusSignal(srv.Client()).Read(context.Background(), "sale", s); err != nil {
		t.Fatal(err)
	}
	if gotPath != "/prometheus/api/v1/query" || gotQuery != s.Adaptive.Query {
		t.Fatalf("path %q query %q", gotPath, gotQuery)
	}
	s.Adaptive.PrometheusURL = "/relative"
	if _, err := adaptive.NewPrometheusSignal(nil).Read(context.Background(), "sale", s); err == nil ||
		!strings.Contains(err.Error(), "not an absolute http(s) URL") {
		t.Fatalf("relative URL: %v", err)
	}
}

func TestPrometheusSignalTimeout(t *testing.T) {
	p := newPromServer(t)
	p.script(answer{hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := adaptive.NewPrometheusSignal(nil).Read(ctx, "sale", promSettings(p.srv.URL))
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("err = %v", err)
	}
}
