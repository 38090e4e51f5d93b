package gate

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/waitroom/waitroom/internal/clientip"
	"github.com/waitroom/waitroom/internal/gatekit"
	"github.com/waitroom/waitroom/queue"
)

// An API client the gate enters for itself takes a place like any other, so
// the room's per-client limits hold at the gate too: the client's bucket
// rides in the request's context to lineBackend.Enter.

type clientKey struct{}

func withClient(h http.Handler, ip func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), clientKey{}, clientip.Bucket(ip(r)))
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// limitClient holds the request's client to the room's limits (s) before
// identity enters; a refusal comes back as *gatekit.Limited.
func (b lineBackend) limitClient(ctx context.Context, s *queue.Settings, identity string) error {
	bucket, ok := ctx.Value(clientKey{}).(string)
	if !ok {
		return nil
	}
	err := b.line.LimitClient(ctx, b.room, s, bucket, identity)
	var le *queue.LimitError
	if errors.As(err, &le) {
		return &gatekit.Limited{Code: le.Code(), Message: le.Explain(), RetryAfter: le.RetryAfter}
	}
	if err != nil {
		return fmt.Errorf("gate: enter: %w", err)
	}
	return nil
}
