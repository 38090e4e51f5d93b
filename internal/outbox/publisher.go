package outbox

import "context"

// Publisher hands intents to the message broker.
type Publisher interface {
	// Publish sends intents, in order per room and visitor, and returns the
	// ids the broker acknowledged. Even when err is not nil some may have
	// been: the relay marks those and retries only the rest.
	Publish(ctx context.Context, intents []Intent) (published []string, err error)
	Close() error
}
