package outbox

import (
	"context"

	"github.com/segmentio/kafka-go"
)

// Backoff exposes the relay's wait after failures for tests.
func (r *Relay) Backoff(failures int) string { return r.backoff(failures).String() }

// Synchronous reads PRAGMA synchronous on the writer connection.
func (s *SQLiteStore) Synchronous(ctx context.Context) (int, error) {
	var n int
	err := s.wdb.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&n)
	return n, err
}

// JournalMode reads PRAGMA journal_mode on a reader connection.
func (s *SQLiteStore) JournalMode(ctx context.Context) (string, error) {
	var m string
	err := s.rdb.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&m)
	return m, err
}

// States reads every intent's status in one query, for tests that check
// thousands.
func (s *SQLiteStore) States(ctx context.Context) (map[string]Status, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, state FROM intents`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]Status{}
	for rows.Next() {
		var id, state string
		if err := rows.Scan(&id, &state); err != nil {
			return nil, err
		}
		out[id] = stateStatus[state]
	}
	return out, rows.Err()
}

// Apply feeds the view one message as if read from Kafka.
func (v *View) Apply(m kafka.Message) { v.apply(m) }
