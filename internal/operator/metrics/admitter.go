package metrics

import "github.com/prometheus/client_golang/prometheus"

// Admitter counts the rooms whose admitter lease this server holds;
// *queue.Admitter is one.
type Admitter interface{ Admitting() int }

// admitterCollector reports Sources.Admitter at scrape time.
type admitterCollector struct {
	src    Admitter
	leases *prometheus.Desc
}

func newAdmitterCollector(src Admitter) *admitterCollector {
	return &admitterCollector{src: src, leases: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "admitter_leases"),
		"Rooms this server admits: it holds their admitter lease and runs their ticks. Per server: sum over servers is the rooms being admitted (one server per room).", nil, nil)}
}

func (c *admitterCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.leases }

func (c *admitterCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.leases, prometheus.GaugeValue, float64(c.src.Admitting()))
}
