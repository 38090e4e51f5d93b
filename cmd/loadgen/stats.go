package main

import (
	"slices"
	"sort"
	"strconv"
	"time"
)

// recorder collects one worker's samples; each worker has its own, so the
// hot path takes no lock, and they are merged once the run ends.
type recorder struct {
	ops map[string]*opSamples
}

type opSamples struct {
	lat    []time.Duration // every completed request, ok or not
	ok     int64
	errors map[string]int64 // HTTP status code or "transport"
}

func newRecorder() *recorder { return &recorder{ops: map[string]*opSamples{}} }

func (r *recorder) op(name string) *opSamples {
	o := r.ops[name]
	if o == nil {
		o = &opSamples{errors: map[string]int64{}}
		r.ops[name] = o
	}
	return o
}

// add records one request. status is 0 when no response came back.
func (r *recorder) add(name string, d time.Duration, status int) {
	o := r.op(name)
	switch {
	case status == 0:
		o.errors["transport"]++
		return // no response: its latency is a timeout or a refusal, not service time
	case status >= 200 && status < 300:
		o.ok++
	default:
		o.errors[strconv.Itoa(status)]++
	}
	o.lat = append(o.lat, d)
}

func (r *recorder) merge(other *recorder) {
	for name, src := range other.ops {
		dst := r.op(name)
		dst.lat = append(dst.lat, src.lat...)
		dst.ok += src.ok
		for k, v := range src.errors {
			dst.errors[k] += v
		}
	}
}

// opReport is one operation's summary, as printed and as JSON.
type opReport struct {
	Requests int64            `json:"requests"` // completed, ok or not, plus transport errors
	OK       int64            `json:"ok"`
	RPS      float64          `json:"rps"` // completed requests per second of the measured phase
	OKRPS    float64          `json:"ok_rps"`
	P50MS    float64          `json:"p50_ms"`
	P90MS    float64          `json:"p90_ms"`
	P99MS    float64          `json:"p99_ms"`
	MaxMS    float64          `json:"max_ms"`
	Errors   map[string]int64 `json:"errors"`
}

func (o *opSamples) report(elapsed time.Duration) opReport {
	slices.Sort(o.lat)
	n := int64(len(o.lat)) + o.errors["transport"]
	r := opReport{
		Requests: n, OK: o.ok, Errors: o.errors,
		P50MS: ms(percentile(o.lat, 50)), P90MS: ms(percentile(o.lat, 90)),
		P99MS: ms(percentile(o.lat, 99)), MaxMS: ms(percentile(o.lat, 100)),
	}
	if s := elapsed.Seconds(); s > 0 {
		r.RPS, r.OKRPS = float64(n)/s, float64(o.ok)/s
	}
	return r
}

// percentile is the nearest-rank percentile of sorted samples: the smallest
// sample with at least p% of all samples at or below it. Exact, unlike a
// bucketed histogram, which is affordable because runs are capped in count.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if p <= 0 {
		return sorted[0]
	}
	rank := int(p / 100 * float64(n))
	if float64(rank) < p/100*float64(n) {
		rank++ // ceil, without float rounding surprises on exact ranks
	}
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// sortedKeys gives a stable print order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
