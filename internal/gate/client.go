package gate

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
	"github.com/waitroom/waitroom/queue"
)

// An API client the gate enters for itself takes a place like any other, so
// the room's per-client limits and its network's price hold at the gate
// too: the client's bucket rides in the request's context to
// lineBackend.Enter.

type clientKey struct{}

// Challenges counts the proof-of-work solutions a client network sends, as
// waitroom's --challenges-per-ip counts them at GET …/challenge and enter
// (throttle.Failures' Take): checking one runs scrypt, so a flood of
// made-up solutions through the gate must be bounded like one through the
// API. nil counts nothing.
type Challenges interface {
	Take(ctx context.Context, client string) (time.Duration, bool)
}

// network is the client network ip belongs to, as prices and the challenge
// limit count it (clientip.Network).
func network(ip string, v4Bits int) string { return clientip.Network(ip, v4Bits) }

func withClient(h http.Handler, ip func(*http.Request) string, v4Bits int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), clientKey{}, network(ip(r), v4Bits))
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// limited is a per-client limit's refusal as *gatekit.Limited; any other
// error as it is.
func limited(err error) error {
	var le *queue.LimitError
	if errors.As(err, &le) {
		return &gatekit.Limited{Code: le.Code(), Message: le.Explain(), RetryAfter: le.RetryAfter}
	}
	return err
}
