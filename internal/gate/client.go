package gate

import (
	"context"
	"errors"
	"net/http"

	"github.com/waitroom/waitroom/internal/clientip"
	"github.com/waitroom/waitroom/internal/gatekit"
	"github.com/waitroom/waitroom/queue"
)

// An API client the gate enters for itself takes a place like any other, so
// the room's per-client limits and its network's price hold at the gate
// too: the client's bucket rides in the request's context to
// lineBackend.Enter.

type clientKey struct{}

func withClient(h http.Handler, ip func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), clientKey{}, clientip.Bucket(ip(r)))
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
