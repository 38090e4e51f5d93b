package outbox

import (
	"context"
	"encoding/json"
)

// Store is the durable outbox. Every method is safe for concurrent use.
type Store interface {
	// Accept records an intent durably and returns it with created true;
	// or, when the visitor already has an open intent in room, returns that
	// one unchanged with created false. It returns only after COMMIT.
	Accept(ctx context.Context, room, visitor string, payload json.RawMessage) (in Intent, created bool, err error)
	// Get returns an intent by id, or ErrNotFound.
	Get(ctx context.Context, id string) (Intent, error)
	// Pending returns up to limit accepted intents not yet published, oldest first.
	Pending(ctx context.Context, limit int) ([]Intent, error)
	// MarkPublished moves accepted intents to published; others are left as they are.
	MarkPublished(ctx context.Context, ids []string) error
	// Finish applies consumers' results and returns how many changed an
	// intent. A result for an unknown or already final intent, or with an
	// unknown status, is ignored.
	Finish(ctx context.Context, results []ResultMessage) (int, error)
	// Counts returns the intents by status.
	Counts(ctx context.Context) (Counts, error)
	// Close finishes the writes already taken and closes the store.
	Close() error
}
