package server

import (
	"net/http"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// limitError is a per-client limit's refusal as the client sees it: 429,
// Retry-After, and a message that names the limit.
func limitError(le *queue.LimitError) *apiError {
	return &apiError{Status: http.StatusTooManyRequests, Code: le.Code(), Message: le.Explain(),
		RetryAfter: max(le.RetryAfter, time.Second)}
}
