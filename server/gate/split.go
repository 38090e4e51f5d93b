package gate

import (
	"fmt"
	"net/http"

	"github.com/waitroom/waitroom/server/gate/internal/gatekit"
)

// WaitroomPaths are the paths waitroom serves itself (see server.New). On
// one origin they must reach waitroom, never the upstream: the waiting
// page behind the gate would never let anyone in.
var WaitroomPaths = []string{
	"/api/rooms/*", "/api/tokens/*", "/api/intents/*",
	"/rooms/*", "/embed/*", "/admin", "/admin/*", "/static/*",
	"/.well-known/jwks.json", "/healthz", "/livez", "/readyz",
}

// Split sends requests for waitroomPaths (WaitroomPaths when nil) to
// waitroom and everything else to the gate, so that one origin serves both
// and the waiting page and the gate share the visitor's wr_vid cookie.
// Split sits outside waitroom's echo router so that its middleware (a
// 64 KiB body limit, frame headers) does not touch upstream traffic.
func Split(waitroom, gate http.Handler, waitroomPaths []string) (http.Handler, error) {
	if waitroomPaths == nil {
		waitroomPaths = WaitroomPaths
	}
	own, err := gatekit.ParsePatterns(waitroomPaths)
	if err != nil {
		return nil, fmt.Errorf("gate: split: %w", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if own.Match(r.URL.Path) {
			waitroom.ServeHTTP(w, r)
			return
		}
		gate.ServeHTTP(w, r)
	}), nil
}
