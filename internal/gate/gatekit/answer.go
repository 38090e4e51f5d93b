package gatekit

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// waitBody is what an API client held at the gate reads. It carries
// waitroom's error envelope, so clients that read {"error": {"code"}} from
// waitroom read the gate the same way, and beside it the ticket as
// waitroom's API shows it (queue.View; zero when there is none).
type waitBody struct {
	Error          errorBody `json:"error"`
	WaitingRoomURL string    `json:"waiting_room_url"`
	RetryAfterMS   int64     `json:"retry_after_ms"`
	queue.View
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// writeChallenge answers as waitroom's enter does when a place needs work:
// the error, and the challenge beside it (never cached: it is one client's).
func writeChallenge(w http.ResponseWriter, ch *Challenged, waitingURL string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	b, _ := json.Marshal(struct {
		Error          errorBody       `json:"error"`
		Challenge      json.RawMessage `json:"challenge"`
		WaitingRoomURL string          `json:"waiting_room_url"`
	}{errorBody{Code: ch.Code, Message: ch.Message, Field: ch.Field}, ch.Challenge, waitingURL})
	w.WriteHeader(ch.Status)
	_, _ = w.Write(append(b, '\n'))
}

// writeRefusal answers with waitroom's error envelope and the waiting page,
// no ticket: the request was given none.
func writeRefusal(w http.ResponseWriter, status int, e errorBody, waitingURL string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	b, _ := json.Marshal(struct {
		Error          errorBody `json:"error"`
		WaitingRoomURL string    `json:"waiting_room_url"`
	}{e, waitingURL})
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// Codes of the gate's answers.
const (
	CodeInLine      = "in_line"     // 429: waiting for a turn
	CodeTooEarly    = "too_early"   // 425: admitted, the turn starts at orderable_at
	CodeClosed      = "closed"      // 403: the room has ended, or is closed for maintenance
	CodeSoldOut     = "sold_out"    // 403: the operator ended the sale
	CodeLineFull    = "line_full"   // 503: the line holds max_waiting; ask again after Retry-After
	CodeUnavailable = "unavailable" // 503: the waiting room cannot be asked now
	// CodeOtherHolder, 403: the entry token sent belongs to another visitor
	// (a copy). No place is taken for the request: it comes without the
	// copy for one of its own.
	CodeOtherHolder = "token_other_holder"
)

// retryAfter is a whole number of seconds, rounded up, at least 1.
func retryAfter(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	return strconv.FormatInt(max(s, 1), 10)
}

func writeJSON(w http.ResponseWriter, status int, retry time.Duration, body waitBody) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if retry > 0 {
		h.Set("Retry-After", retryAfter(retry))
		body.RetryAfterMS = max(retry.Milliseconds(), 1)
	}
	b, _ := json.Marshal(body) // plain strings and numbers: cannot fail
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
