package metrics

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// BuildInfo names the running build: waitroom_build_info{version,
// revision, goversion} 1, the usual way to join a version onto any series.
type BuildInfo struct {
	Version  string
	Revision string
}

// RegisterBuildInfo adds waitroom_build_info to reg.
func RegisterBuildInfo(reg prometheus.Registerer, b BuildInfo) error {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help:        "Always 1; its labels name the running build.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision, "goversion": runtime.Version()},
	})
	g.Set(1)
	return reg.Register(g)
}
