package gate

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
)

// Split sends requests for waitroomPaths, the patterns of every path
// waitroom serves itself (server.Server.Paths, from its route table), to
// waitroom and everything else to the gate, so that one origin serves both
// and the waiting page and the gate share the visitor's wr_vid cookie. On
// one origin waitroom's paths must never reach the upstream: the waiting
// page behind the gate would never let anyone in, and the upstream would
// see waitroom's metrics. Split sits outside waitroom's echo router so that
// its middleware (a 64 KiB body limit, frame headers) does not touch
// upstream traffic.
func Split(waitroom, gate http.Handler, waitroomPaths []string) (http.Handler, error) {
	own, err := gatekit.ParsePatterns(waitroomPaths)
	if err != nil {
		return nil, fmt.Errorf("gate: split: %w", err)
	}
	if own.Empty() {
		return nil, errors.New("gate: split: no waitroom paths")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if own.Match(r.URL.Path) {
			waitroom.ServeHTTP(w, r)
			return
		}
		gate.ServeHTTP(w, r)
	}), nil
}
